//! Where checkpoints live: a folder of the project's Sluice state folder (never inside the
//! project).
//!
//! Layout under `<state>/checkpoints`:
//! - `blobs/<first two hex digits>/<sha256 hex>`: one file's bytes, stored once however many
//!   checkpoints (of this project) hold them; written to a temp name, fsynced, renamed.
//! - `manifests/<id>.json.gz`: every entry of one checkpoint (path, kind, size, hash, mode and
//!   the stat facts the next checkpoint's cache compares).
//! - `meta/<id>.json`: what `list_checkpoints` shows; written last, so it is what makes a
//!   checkpoint exist. A manifest without it is debris of an interrupted checkpoint.
//! - `usage.json`: the bytes the blobs take, kept current so the byte bound needs no scan.
//!
//! Everything read back is checked: a blob's bytes against its hash, a manifest's paths by the
//! restore planner. Physical paths here never appear in messages.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Manifest, Meta};
use crate::RunnerError;
use crate::mutate::store::{create_private_dir_all, private_file};

fn state_err(e: std::io::Error) -> RunnerError {
    RunnerError::State(e.kind())
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Usage {
    blob_bytes: u64,
    /// Checkpoints dropped since the last collection.
    #[serde(default)]
    dropped: u64,
}

pub(crate) struct Store {
    dir: PathBuf,
}

impl Store {
    pub fn open(state_dir: &Path) -> Result<Store, RunnerError> {
        let dir = state_dir.join("checkpoints");
        for sub in ["blobs", "manifests", "meta", "tmp"] {
            create_private_dir_all(&dir.join(sub)).map_err(state_err)?;
        }
        Ok(Store { dir })
    }

    fn blob_path(&self, hash: &str) -> PathBuf {
        self.dir.join("blobs").join(&hash[..2]).join(hash)
    }

    pub fn has_blob(&self, hash: &str) -> bool {
        self.blob_path(hash).is_file()
    }

    /// Copies `src` into the store while hashing it; returns its size, its SHA-256 (hex) and
    /// how many bytes the store grew by (0 when the content was there already).
    pub fn save_blob(
        &self,
        src: &mut impl Read,
        max: u64,
    ) -> Result<(u64, String, u64), SaveError> {
        let tmp = self.dir.join("tmp").join(random_name());
        let mut out = private_file(&tmp).map_err(|e| SaveError::State(state_err(e)))?;
        let result = (|| {
            let mut hasher = Sha256::new();
            let mut buf = vec![0u8; 64 * 1024];
            let mut total = 0u64;
            loop {
                let n = src.read(&mut buf).map_err(SaveError::Read)?;
                if n == 0 {
                    break;
                }
                total += n as u64;
                if total > max {
                    return Err(SaveError::TooLarge);
                }
                hasher.update(&buf[..n]);
                out.write_all(&buf[..n]).map_err(|e| SaveError::State(state_err(e)))?;
            }
            let hash = hex(&hasher.finalize());
            let dest = self.blob_path(&hash);
            if dest.is_file() {
                return Ok((total, hash, 0));
            }
            // On Linux one `syncfs` before the manifest is written makes every new blob durable
            // at once ([`Store::write`]); a fsync per file made a first checkpoint of 10 000
            // files take seconds.
            #[cfg(not(target_os = "linux"))]
            out.sync_all().map_err(|e| SaveError::State(state_err(e)))?;
            let parent = dest.parent().unwrap_or(&self.dir);
            create_private_dir_all(parent).map_err(|e| SaveError::State(state_err(e)))?;
            fs::rename(&tmp, &dest).map_err(|e| SaveError::State(state_err(e)))?;
            Ok((total, hash, total))
        })();
        let _ = fs::remove_file(&tmp);
        if let Ok((_, _, added)) = &result
            && *added > 0
        {
            self.add_usage(*added as i64);
        }
        result
    }

    /// A blob's bytes, only if they still have their hash.
    pub fn load_blob(&self, hash: &str) -> Result<Vec<u8>, RunnerError> {
        if !valid_hash(hash) {
            return Err(RunnerError::State(std::io::ErrorKind::InvalidData));
        }
        let bytes = fs::read(self.blob_path(hash)).map_err(state_err)?;
        if hex(&Sha256::digest(&bytes)) != hash {
            return Err(RunnerError::State(std::io::ErrorKind::InvalidData));
        }
        Ok(bytes)
    }

    pub fn write(&self, manifest: &Manifest, meta: &Meta) -> Result<(), RunnerError> {
        #[cfg(target_os = "linux")]
        {
            let dir = File::open(self.dir.join("blobs")).map_err(state_err)?;
            rustix::fs::syncfs(&dir).map_err(|e| state_err(e.into()))?;
        }
        let json = serde_json::to_vec(manifest)
            .map_err(|_| RunnerError::State(std::io::ErrorKind::InvalidData))?;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&json).map_err(state_err)?;
        let packed = gz.finish().map_err(state_err)?;
        self.write_atomic(&self.manifest_path(&meta.id), &packed)?;
        let meta_json = serde_json::to_vec_pretty(meta)
            .map_err(|_| RunnerError::State(std::io::ErrorKind::InvalidData))?;
        self.write_atomic(&self.meta_path(&meta.id), &meta_json)
    }

    pub fn write_meta(&self, meta: &Meta) -> Result<(), RunnerError> {
        let json = serde_json::to_vec_pretty(meta)
            .map_err(|_| RunnerError::State(std::io::ErrorKind::InvalidData))?;
        self.write_atomic(&self.meta_path(&meta.id), &json)
    }

    fn manifest_path(&self, id: &str) -> PathBuf {
        self.dir.join("manifests").join(format!("{id}.json.gz"))
    }

    fn meta_path(&self, id: &str) -> PathBuf {
        self.dir.join("meta").join(format!("{id}.json"))
    }

    /// Bounded like any file read from the state folder: a manifest is never larger than this
    /// compressed, nor than 16 times it once inflated.
    pub fn manifest(&self, id: &str) -> Result<Option<Manifest>, RunnerError> {
        const MAX: u64 = 64 << 20;
        let file = match File::open(self.manifest_path(id)) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(state_err(e)),
        };
        let mut json = Vec::new();
        flate2::read::GzDecoder::new(file.take(MAX))
            .take(MAX * 16)
            .read_to_end(&mut json)
            .map_err(|_| RunnerError::State(std::io::ErrorKind::InvalidData))?;
        serde_json::from_slice(&json)
            .map(Some)
            .map_err(|_| RunnerError::State(std::io::ErrorKind::InvalidData))
    }

    pub fn meta(&self, id: &str) -> Result<Option<Meta>, RunnerError> {
        match fs::read(self.meta_path(id)) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|_| RunnerError::State(std::io::ErrorKind::InvalidData)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(state_err(e)),
        }
    }

    /// Every checkpoint, newest first. Unreadable entries are skipped.
    pub fn list(&self) -> Result<Vec<Meta>, RunnerError> {
        let mut out = Vec::new();
        for entry in fs::read_dir(self.dir.join("meta")).map_err(state_err)? {
            let entry = entry.map_err(state_err)?;
            let name = entry.file_name();
            let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".json")) else { continue };
            if let Ok(Some(meta)) = self.meta(id)
                && meta.id == id
            {
                out.push(meta);
            }
        }
        out.sort_by(|a, b| (b.created_ms, &b.id).cmp(&(a.created_ms, &a.id)));
        Ok(out)
    }

    pub fn remove(&self, id: &str) {
        let _ = fs::remove_file(self.meta_path(id));
        let _ = fs::remove_file(self.manifest_path(id));
    }

    fn usage(&self) -> Usage {
        match fs::read(self.dir.join("usage.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<Usage>(&b).ok())
        {
            Some(u) => u,
            None => {
                let usage = Usage { blob_bytes: self.count_blob_bytes(), dropped: 0 };
                self.write_usage(&usage);
                usage
            }
        }
    }

    /// The bytes the blobs take (recounted if the record is missing).
    pub fn blob_bytes(&self) -> u64 {
        self.usage().blob_bytes
    }

    /// Counts a dropped checkpoint; returns how many were dropped since the last collection.
    pub fn note_drop(&self) -> u64 {
        let mut usage = self.usage();
        usage.dropped += 1;
        self.write_usage(&usage);
        usage.dropped
    }

    fn add_usage(&self, delta: i64) {
        let mut usage = self.usage();
        usage.blob_bytes = usage.blob_bytes.saturating_add_signed(delta);
        self.write_usage(&usage);
    }

    fn set_usage(&self, blob_bytes: u64) {
        self.write_usage(&Usage { blob_bytes, dropped: 0 });
    }

    fn write_usage(&self, usage: &Usage) {
        if let Ok(json) = serde_json::to_vec(usage) {
            let _ = self.write_atomic(&self.dir.join("usage.json"), &json);
        }
    }

    fn count_blob_bytes(&self) -> u64 {
        let mut total = 0;
        for (_, size) in self.blobs() {
            total += size;
        }
        total
    }

    fn blobs(&self) -> Vec<(PathBuf, u64)> {
        let mut out = Vec::new();
        let Ok(shards) = fs::read_dir(self.dir.join("blobs")) else { return out };
        for shard in shards.flatten() {
            let Ok(files) = fs::read_dir(shard.path()) else { continue };
            for file in files.flatten() {
                if let Ok(meta) = file.metadata() {
                    out.push((file.path(), meta.len()));
                }
            }
        }
        out
    }

    /// Deletes every blob no remaining manifest references, manifests without a meta, and
    /// leftover temp files; recounts the usage.
    pub fn collect(&self) -> Result<(), RunnerError> {
        let metas = self.list()?;
        let mut keep: HashSet<String> = HashSet::new();
        let ids: HashSet<&str> = metas.iter().map(|m| m.id.as_str()).collect();
        for meta in &metas {
            // A manifest that cannot be read keeps nothing alive: it cannot be restored anyway.
            if let Ok(Some(manifest)) = self.manifest(&meta.id) {
                keep.extend(manifest.entries.into_iter().filter_map(|e| e.hash));
            }
        }
        if let Ok(entries) = fs::read_dir(self.dir.join("manifests")) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let id = name.to_str().and_then(|n| n.strip_suffix(".json.gz"));
                if id.is_none_or(|id| !ids.contains(id)) {
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
        let mut total = 0;
        for (path, size) in self.blobs() {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if keep.contains(name) {
                total += size;
            } else {
                let _ = fs::remove_file(&path);
            }
        }
        if let Ok(entries) = fs::read_dir(self.dir.join("tmp")) {
            for entry in entries.flatten() {
                let _ = fs::remove_file(entry.path());
            }
        }
        self.set_usage(total);
        Ok(())
    }

    /// Bytes of the manifests and metas (besides the blobs).
    pub fn index_bytes(&self) -> u64 {
        let mut total = 0;
        for sub in ["manifests", "meta"] {
            if let Ok(entries) = fs::read_dir(self.dir.join(sub)) {
                total += entries
                    .flatten()
                    .filter_map(|e| e.metadata().ok())
                    .map(|m| m.len())
                    .sum::<u64>();
            }
        }
        total
    }

    fn write_atomic(&self, path: &Path, bytes: &[u8]) -> Result<(), RunnerError> {
        let tmp = self.dir.join("tmp").join(random_name());
        let mut file = private_file(&tmp).map_err(state_err)?;
        let result = (|| {
            file.write_all(bytes).map_err(state_err)?;
            file.sync_all().map_err(state_err)?;
            fs::rename(&tmp, path).map_err(state_err)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }
}

/// Why a blob could not be saved.
pub(crate) enum SaveError {
    /// Reading the project's file failed.
    Read(std::io::Error),
    /// The file grew past the limit while it was read.
    TooLarge,
    State(RunnerError),
}

pub(crate) fn valid_hash(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn random_name() -> String {
    format!("tmp-{}", sluice_core::id::base32(&sluice_core::random_bytes::<10>()))
}
