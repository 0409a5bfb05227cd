//! The audit log's writer. An append's cost is almost all in its commit, so entries that can
//! wait a moment are gathered and committed together; everything else is written before the
//! call that records it returns.
//!
//! - [`Durability::Now`]: changes, executions, denials, the user's own actions. Written (with
//!   every entry queued before it, so the chain keeps the order things happened in) before
//!   [`AuditWriter::append`] returns.
//! - [`Durability::Soon`]: successful reads, listings and protocol requests. Committed by the
//!   writer thread at most [`LINGER`] after the first of them was queued, or sooner when the
//!   batch is full, something durable is appended, the log is read, or the engine shuts down.
//!   A crash of the process in that window loses them; that is the price of not paying a
//!   commit per read.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sluice_store::{AuditRecord, InstallSecret, Store};

/// How long a [`Durability::Soon`] entry may wait for others to share its commit.
pub const LINGER: Duration = Duration::from_millis(20);
/// A batch this full is committed at once: the writer thread is woken for it.
const MAX_BATCH: usize = 256;
/// Entries committed in one transaction at most: a commit holds the store's connection, which
/// every request's access check also takes (about 1.5 ms for a full batch on this machine),
/// while each commit also costs a fixed share (the chain's head, its seal, the WAL frames).
const COMMIT_CHUNK: usize = MAX_BATCH / 2;
/// Entries queued at most: past this the writer thread is not keeping up, and the producer
/// commits the queue itself (on its request's thread), so the queue's memory stays bounded.
const MAX_QUEUED: usize = 16 * MAX_BATCH;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// On disk (the WAL) before `append` returns.
    Now,
    /// Within [`LINGER`], batched with its neighbours.
    Soon,
}

pub(crate) struct AuditWriter {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

struct Shared {
    store: Arc<Store>,
    secret: Arc<InstallSecret>,
    queue: Mutex<Queue>,
    wake: Condvar,
    /// Held while a batch is taken from the queue and written, so batches land in the order
    /// they were taken; the queue's own lock is never held across a commit, so a request that
    /// queues an entry never waits for one.
    writing: Mutex<()>,
    /// Entries appended since the start: how the engine tells it has gone quiet.
    appended: AtomicU64,
}

#[derive(Default)]
struct Queue {
    pending: Vec<AuditRecord>,
    closed: bool,
}

fn lock(m: &Mutex<Queue>) -> MutexGuard<'_, Queue> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl AuditWriter {
    pub(crate) fn new(store: Arc<Store>, secret: Arc<InstallSecret>) -> AuditWriter {
        AuditWriter {
            shared: Arc::new(Shared {
                store,
                secret,
                queue: Mutex::new(Queue::default()),
                wake: Condvar::new(),
                writing: Mutex::new(()),
                appended: AtomicU64::new(0),
            }),
            thread: Mutex::new(None),
        }
    }

    pub(crate) fn append(&self, record: AuditRecord, durability: Durability) {
        self.shared.appended.fetch_add(1, Ordering::Relaxed);
        let (now, wake) = {
            let mut queue = lock(&self.shared.queue);
            queue.pending.push(record);
            let queued = queue.pending.len();
            let now = durability == Durability::Now || queue.closed || queued >= MAX_QUEUED;
            // The first entry of a batch wakes the writer to start its linger, and the entry
            // that fills it wakes it to commit without waiting out the rest; the others ride
            // along. A full batch is not committed here: that would hold a request (and its
            // async worker) for the commit of hundreds of its neighbours' entries.
            (now, queued == 1 || queued == MAX_BATCH)
        };
        if now || !self.start_thread() {
            self.shared.write();
        } else if wake {
            self.shared.wake.notify_one();
        }
    }

    /// Entries appended since the start, written or still queued.
    pub(crate) fn appended(&self) -> u64 {
        self.shared.appended.load(Ordering::Relaxed)
    }

    /// Writes everything queued; the log then holds every entry appended before this call
    /// (a batch the thread took earlier is written before this takes the rest).
    pub(crate) fn flush(&self) {
        self.shared.write();
    }

    /// Writes everything queued, then checks one more entry could be written now: what a
    /// change or a command start asks before acting, because its own entry must be on disk
    /// before its result goes back (a database held locked by another program, for one, would
    /// otherwise let the change happen unrecorded).
    pub(crate) fn ready(&self) -> Result<(), sluice_store::StoreError> {
        self.shared.write();
        self.shared.store.check_writable()
    }

    /// `false` when no thread could be started; entries are then written as they come.
    fn start_thread(&self) -> bool {
        let mut thread = self.thread.lock().unwrap_or_else(|e| e.into_inner());
        if thread.is_some() {
            return true;
        }
        let shared = self.shared.clone();
        match std::thread::Builder::new().name("sluice-audit".into()).spawn(move || shared.run()) {
            Ok(handle) => {
                *thread = Some(handle);
                true
            }
            Err(err) => {
                tracing::warn!(%err, "cannot start the audit writer; writing entries one by one");
                false
            }
        }
    }
}

impl Drop for AuditWriter {
    fn drop(&mut self) {
        lock(&self.shared.queue).closed = true;
        self.shared.wake.notify_one();
        if let Some(handle) = self.thread.get_mut().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = handle.join();
        }
        // Entries queued after the thread left (none in practice) are not lost either.
        self.flush();
    }
}

impl Shared {
    fn run(&self) {
        loop {
            let closed = {
                let mut queue = lock(&self.queue);
                while queue.pending.is_empty() && !queue.closed {
                    queue = self.wake.wait(queue).unwrap_or_else(|e| e.into_inner());
                }
                // Let the batch fill for LINGER from its first entry, or until it is full; a
                // flush or a durable append in the meantime may empty it, which is fine.
                let deadline = Instant::now() + LINGER;
                while !queue.closed && !queue.pending.is_empty() && queue.pending.len() < MAX_BATCH
                {
                    let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                        break;
                    };
                    queue =
                        self.wake.wait_timeout(queue, left).unwrap_or_else(|e| e.into_inner()).0;
                }
                queue.closed
            };
            self.write();
            if closed {
                return;
            }
        }
    }

    /// Commits what is queued, [`COMMIT_CHUNK`] entries a transaction. A chunk the store
    /// refuses is retried entry by entry, so one bad entry cannot take its neighbours with it.
    /// Failures are logged, never surfaced: the requests they record already happened.
    fn write(&self) {
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let batch = std::mem::take(&mut lock(&self.queue).pending);
        // Committed a few dozen at a time: the store's connection is shared with every request's
        // access check, and a commit holds it throughout. The order stays the batch's (the
        // writing lock is held across all of them).
        for chunk in batch.chunks(COMMIT_CHUNK) {
            let Err(err) = self.store.audit_append_all(&self.secret, chunk) else { continue };
            if chunk.len() == 1 {
                tracing::error!(%err, "could not append to the audit log");
                continue;
            }
            for record in chunk {
                if let Err(err) = self.store.audit_append(&self.secret, record) {
                    tracing::error!(%err, action = %record.action, "could not append to the audit log");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use sluice_store::{ActorKind, AuditFilter, Outcome};

    use super::*;

    fn record(action: &str) -> AuditRecord {
        AuditRecord {
            time_ms: sluice_store::now_ms(),
            actor: "tester".into(),
            actor_kind: ActorKind::Mcp,
            token_id: None,
            action: action.into(),
            project_id: None,
            outcome: Outcome::Ok,
            error_code: None,
            duration_ms: Some(0),
            params_hash: None,
            detail: None,
        }
    }

    fn setup() -> (tempfile::TempDir, Arc<Store>, Arc<InstallSecret>, AuditWriter) {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path()).unwrap());
        let secret = Arc::new(InstallSecret::generate());
        let writer = AuditWriter::new(store.clone(), secret.clone());
        (dir, store, secret, writer)
    }

    /// Oldest first.
    fn actions(store: &Store) -> Vec<String> {
        let mut entries = store.audit_list(&AuditFilter::default(), 10_000, None).unwrap();
        entries.reverse();
        entries.into_iter().map(|e| e.record.action).collect()
    }

    #[test]
    fn reads_land_on_their_own_shortly_after() {
        let (_dir, store, secret, writer) = setup();
        writer.append(record("read_file"), Durability::Soon);
        writer.append(record("list_directory"), Durability::Soon);
        let deadline = Instant::now() + Duration::from_secs(10);
        while actions(&store).len() < 2 {
            assert!(Instant::now() < deadline, "the writer never committed the batch");
            std::thread::sleep(LINGER / 4);
        }
        assert_eq!(actions(&store), ["read_file", "list_directory"]);
        assert!(store.audit_verify(&secret).unwrap().intact);
    }

    #[test]
    fn a_durable_entry_is_written_at_once_after_everything_queued_before_it() {
        let (_dir, store, secret, writer) = setup();
        writer.append(record("read_file"), Durability::Soon);
        writer.append(record("write_file"), Durability::Now);
        assert_eq!(actions(&store), ["read_file", "write_file"]);
        writer.append(record("stat"), Durability::Soon);
        writer.flush();
        assert_eq!(actions(&store), ["read_file", "write_file", "stat"]);
        assert!(store.audit_verify(&secret).unwrap().intact);
    }

    #[test]
    fn dropping_the_writer_writes_what_is_queued() {
        let (_dir, store, secret, writer) = setup();
        for i in 0..(MAX_BATCH + 10) {
            writer.append(record(&format!("call_{i}")), Durability::Soon);
        }
        drop(writer);
        let all = actions(&store);
        assert_eq!(all.len(), MAX_BATCH + 10);
        assert!(all.iter().enumerate().all(|(i, a)| *a == format!("call_{i}")), "order kept");
        assert!(store.audit_verify(&secret).unwrap().intact);
    }

    #[test]
    fn a_full_batch_goes_to_the_writer_thread_and_a_backlog_to_its_producer() {
        let (_dir, store, secret, writer) = setup();
        let writer = Arc::new(writer);
        // While a commit is under way (the writing lock held), a request that fills a batch
        // does not wait for it: it returns and the writer thread commits the batch.
        let writing = writer.shared.writing.lock().unwrap();
        let (done, filled) = std::sync::mpsc::channel();
        let producer = {
            let writer = writer.clone();
            std::thread::spawn(move || {
                for i in 0..MAX_BATCH {
                    writer.append(record(&format!("call_{i}")), Durability::Soon);
                }
                done.send(()).unwrap();
                // A backlog past MAX_QUEUED is committed by its producer before it returns.
                for i in MAX_BATCH..MAX_QUEUED {
                    writer.append(record(&format!("call_{i}")), Durability::Soon);
                }
            })
        };
        filled.recv_timeout(Duration::from_secs(30)).expect("a full batch held its producer");
        // Nothing is taken from the queue while the writing lock is held: once it holds the
        // whole backlog, the producer is waiting to commit it.
        let deadline = Instant::now() + Duration::from_secs(30);
        while lock(&writer.shared.queue).pending.len() < MAX_QUEUED {
            assert!(Instant::now() < deadline, "the backlog never reached its bound");
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(writing);
        producer.join().unwrap();
        let all = actions(&store);
        assert_eq!(all.len(), MAX_QUEUED, "the backlog was on disk when its producer returned");
        assert!(all.iter().enumerate().all(|(i, a)| *a == format!("call_{i}")), "order kept");
        assert!(store.audit_verify(&secret).unwrap().intact);
    }

    #[test]
    fn concurrent_appenders_keep_their_own_order_and_the_chain() {
        let (_dir, store, secret, writer) = setup();
        let writer = Arc::new(writer);
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let writer = writer.clone();
                std::thread::spawn(move || {
                    for i in 0..300 {
                        let durability =
                            if i % 7 == 0 { Durability::Now } else { Durability::Soon };
                        writer.append(record(&format!("t{t}_{i}")), durability);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        writer.flush();
        let all = actions(&store);
        assert_eq!(all.len(), 4 * 300);
        for t in 0..4 {
            let mine: Vec<usize> = all
                .iter()
                .filter_map(|a| a.strip_prefix(&format!("t{t}_"))?.parse().ok())
                .collect();
            assert_eq!(mine, (0..300).collect::<Vec<_>>(), "thread {t}'s entries out of order");
        }
        assert!(store.audit_verify(&secret).unwrap().intact);
    }

    /// Through the engine: a successful read waits for its batch, a refusal of the same read
    /// is on disk before `audit_request` returns, and so is everything queued before it.
    #[test]
    fn the_engine_writes_refusals_at_once() {
        use crate::{AuditOutcome, Engine, EngineConfig, SecretPreference};
        let dir = tempfile::tempdir().unwrap();
        let engine =
            Engine::open(&EngineConfig::new(dir.path().join("data"), SecretPreference::FileOnly))
                .unwrap();
        let (_, plaintext) = engine.create_token("t", None, None).unwrap();
        let caller = engine.authenticate(&plaintext).unwrap();
        let seen = || actions(&engine.store).into_iter().filter(|a| a == "read_file").count();
        let before = seen();
        let call = |outcome| {
            engine.audit_request(crate::RequestAudit {
                caller: &caller,
                action: "read_file",
                project_ref: None,
                outcome,
                error_code: None,
                duration_ms: 0,
                params: None,
                durability: Durability::Soon,
            })
        };
        call(AuditOutcome::Ok);
        call(AuditOutcome::Denied);
        assert_eq!(seen(), before + 2, "the refusal and the read queued before it");
    }

    #[test]
    fn one_bad_entry_does_not_take_its_batch_with_it() {
        let (_dir, store, secret, writer) = setup();
        writer.append(record("read_file"), Durability::Soon);
        writer.append(record(""), Durability::Soon); // the store refuses an empty action
        writer.append(record("stat"), Durability::Now);
        assert_eq!(actions(&store), ["read_file", "stat"]);
        assert!(store.audit_verify(&secret).unwrap().intact);
    }

    #[test]
    fn a_batch_of_several_chunks_lands_whole_and_in_order_but_for_a_bad_entry() {
        let (_dir, store, secret, writer) = setup();
        let count = 3 * COMMIT_CHUNK + 5;
        let bad = 2 * COMMIT_CHUNK + 1;
        for i in 0..count {
            let action = if i == bad { String::new() } else { format!("call_{i}") };
            writer.append(record(&action), Durability::Soon);
        }
        writer.flush();
        let expected: Vec<String> =
            (0..count).filter(|i| *i != bad).map(|i| format!("call_{i}")).collect();
        assert_eq!(actions(&store), expected);
        assert!(store.audit_verify(&secret).unwrap().intact);
    }
}
