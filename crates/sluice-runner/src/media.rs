//! `read_media`: what `read_file` refuses. An image (PNG, JPEG, GIF's first frame, WebP — known
//! by its content, not its name) comes back decoded and downscaled so a multimodal model can look
//! at it; any other binary file comes back as a bounded byte range.
//!
//! Untrusted bytes meet a decoder here, so every bound holds before decoding: the file's size
//! ([`MAX_IMAGE_FILE_BYTES`]), and `image::Limits` on the dimensions and the memory the header
//! declares — a decompression bomb (a tiny PNG declaring 100000×100000) is `image_too_large`
//! before anything is allocated, a truncated or corrupt image `image_invalid`, never a panic.
//!
//! Choices:
//! - The returned picture's longest side is at most `max_dimension` (default
//!   [`DEFAULT_MAX_DIMENSION`], the size models take without scaling it again); a JPEG comes back
//!   as JPEG (a photo as PNG would be several times larger), everything else as PNG (screenshots
//!   and diagrams stay sharp and keep transparency) unless that PNG is over
//!   [`MAX_ENCODED_BYTES`], when it is sent as JPEG, then smaller, until it fits. The picture is
//!   always re-encoded, so no metadata (EXIF with GPS, text chunks) is passed on.
//! - Text files, SVG included, are refused with `text_file`: `read_file` reads them, and only it
//!   applies the text redaction. Byte ranges have known secret formats masked in place
//!   (`sluice_core::redact::mask_bytes`), looking [`MASK_MARGIN`] bytes past both ends so a
//!   secret split by the range's edge is still seen whole.
//! - `offset` or `length` on an image asks for its raw bytes instead of the picture.

use std::io::{Cursor, Read, Seek, SeekFrom};

use image::{DynamicImage, ImageError, ImageFormat, ImageReader, Limits};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::plain_integers;
use crate::read::{human, is_text};
use crate::{RunnerError, Workspace};

/// The largest image file decoded (a larger one can still be read as bytes).
pub const MAX_IMAGE_FILE_BYTES: u64 = 20 * 1024 * 1024;
/// The longest side of a returned picture, by default.
pub const DEFAULT_MAX_DIMENSION: u32 = 1568;
/// The largest `max_dimension` a caller may ask for.
pub const MAX_DIMENSION_CAP: u32 = 4096;
/// The widest and tallest image decoded, whatever its file size.
pub const MAX_IMAGE_SIDE: u32 = 16384;
/// The most memory a decoder may allocate for one image (its pixels at their bit depth):
/// 64 megapixels of 8-bit RGBA.
pub const MAX_DECODE_ALLOC: u64 = 256 * 1024 * 1024;
/// The most bytes one call returns of a non-image file (the default and the cap of `length`).
pub const MAX_RANGE_BYTES: u64 = 1024 * 1024;
/// How far past each end of a byte range secrets are looked for.
const MASK_MARGIN: u64 = 8 * 1024;
/// The largest encoded picture returned (3.75 MB, 5 MB in base64: what the strictest model API
/// takes); a larger PNG is sent as JPEG, then at half the size, until it fits.
const MAX_ENCODED_BYTES: usize = 3_750_000;
/// JPEG quality of re-encoded photos.
const JPEG_QUALITY: u8 = 85;
/// How much of the file's beginning decides what it is.
const SNIFF_BYTES: u64 = 8 * 1024;

/// Arguments of `read_media`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
#[schemars(transform = plain_integers)]
pub struct ReadMediaArgs {
    /// File to read, relative to the project root, with `/` separators.
    pub path: String,
    /// First byte to return, 0-based (non-images; on an image, asks for its raw bytes instead of
    /// the picture). Default 0.
    pub offset: Option<u64>,
    /// How many bytes to return from `offset` (non-images; on an image, asks for its raw bytes).
    /// Default and max 1048576 (1 MiB).
    #[schemars(range(min = 1, max = 1048576))]
    pub length: Option<u64>,
    /// Longest side, in pixels, of a returned image; larger images are scaled down keeping
    /// their proportions, smaller ones are never scaled up. Default 1568, min 16, max 4096.
    #[schemars(range(min = 16, max = 4096))]
    pub max_dimension: Option<u32>,
}

/// What `read_media` returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MediaKind {
    /// A decoded picture, in the result's image content.
    Image,
    /// A byte range, in the result's embedded blob resource.
    Bytes,
}

/// Result of `read_media` (the structured part; the picture or the bytes are the result's
/// image content or embedded resource).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct ReadMediaOutput {
    /// The file, project-relative.
    pub path: String,
    /// `image` (the picture is in the image content) or `bytes` (a range is in the embedded
    /// resource).
    pub kind: MediaKind,
    /// MIME type of the returned content: `image/png` or `image/jpeg` for a picture, the
    /// file's type by content (or `application/octet-stream`) for bytes.
    pub mime: String,
    /// File size in bytes.
    pub size: u64,
    /// The image's format by content (`image/png`, `image/jpeg`, `image/gif`, `image/webp`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_mime: Option<String>,
    /// The image's own width in pixels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// The image's own height in pixels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    /// Width of the returned picture.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub returned_width: Option<u32>,
    /// Height of the returned picture.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub returned_height: Option<u32>,
    /// First returned byte (bytes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Number of returned bytes (bytes); for a picture, the size of its encoding.
    pub length: u64,
    /// Where to continue, when bytes remain after the returned range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// True when known secret formats in the returned bytes were overwritten with `*`.
    pub redacted: bool,
}

/// [`read_media`]'s answer: what to tell the caller and the bytes to send.
#[derive(Debug, Clone)]
pub struct Media {
    pub output: ReadMediaOutput,
    /// The encoded picture or the byte range.
    pub data: Vec<u8>,
}

/// Reads an image or a range of a binary file of the project.
pub fn read_media(ws: &Workspace, args: &ReadMediaArgs) -> Result<Media, RunnerError> {
    let rel = ws.request(Some(&args.path))?;
    if rel.is_root() {
        return Err(RunnerError::invalid(
            "read_media needs a file path; use list_directory to see the project's files",
        ));
    }
    // The same race-safe open as read_file's: beneath the root, shield checked on where it led.
    let (mut file, meta, resolved) = ws.root().open_file_resolved(&rel)?;
    ws.check_resolved(&rel, &resolved)?;
    let path = rel.to_string();
    let size = meta.len();
    let io = |e: std::io::Error| RunnerError::Io { path: path.clone(), kind: e.kind() };

    let mut head = Vec::new();
    (&mut file).take(SNIFF_BYTES).read_to_end(&mut head).map_err(io)?;
    let format = image_format(&head);
    let raw_requested = args.offset.is_some() || args.length.is_some();
    if let Some(format) = format.filter(|_| !raw_requested) {
        if size > MAX_IMAGE_FILE_BYTES {
            return Err(RunnerError::ImageTooLarge(format!(
                "`{path}` is a {} image of {}, over the {} read_media decodes; its raw bytes \
                 can be read with offset and length",
                format.to_mime_type(),
                human(size),
                human(MAX_IMAGE_FILE_BYTES)
            )));
        }
        let mut encoded = head;
        file.take(MAX_IMAGE_FILE_BYTES - encoded.len() as u64)
            .read_to_end(&mut encoded)
            .map_err(io)?;
        let max_side =
            args.max_dimension.unwrap_or(DEFAULT_MAX_DIMENSION).clamp(16, MAX_DIMENSION_CAP);
        return image_media(&path, size, format, &encoded, max_side);
    }
    if format.is_none() && is_text(&head) {
        return Err(RunnerError::TextFile { path });
    }
    byte_range(&mut file, &path, size, &head, format, args)
}

/// The image format of a file starting with `head`, among those read_media decodes.
fn image_format(head: &[u8]) -> Option<ImageFormat> {
    match image::guess_format(head) {
        Ok(f @ (ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP)) => {
            Some(f)
        }
        _ => None,
    }
}

fn image_media(
    path: &str,
    size: u64,
    format: ImageFormat,
    encoded: &[u8],
    max_side: u32,
) -> Result<Media, RunnerError> {
    let picture = decode_image(encoded, format).map_err(|e| image_error(path, format, &e))?;
    let (width, height) = (picture.width(), picture.height());
    // PNG for all but photos; if that is over what a model accepts, JPEG; then smaller.
    let mut side = max_side;
    let mut png = format != ImageFormat::Jpeg;
    let (returned, data, mime) = loop {
        let scaled = if width.max(height) > side {
            // Each source pixel counts once (integer box sampling): no float copy of a large
            // image.
            std::borrow::Cow::Owned(picture.thumbnail(side, side))
        } else {
            std::borrow::Cow::Borrowed(&picture)
        };
        let (data, mime) = encode_image(&scaled, png).map_err(|e| image_error(path, format, &e))?;
        if data.len() <= MAX_ENCODED_BYTES || side <= 64 {
            break ((scaled.width(), scaled.height()), data, mime);
        }
        if png {
            png = false;
        } else {
            side /= 2;
        }
    };
    Ok(Media {
        output: ReadMediaOutput {
            path: path.to_owned(),
            kind: MediaKind::Image,
            mime: mime.to_owned(),
            size,
            source_mime: Some(format.to_mime_type().to_owned()),
            width: Some(width),
            height: Some(height),
            returned_width: Some(returned.0),
            returned_height: Some(returned.1),
            offset: None,
            length: data.len() as u64,
            next_offset: None,
            redacted: false,
        },
        data,
    })
}

/// Decodes `bytes` as whichever image format they start with, within the same limits as
/// [`read_media`]: the picture's dimensions, `None` when they are not an image read_media
/// decodes. For the fuzz target `image_decode` (`crates/sluice-fuzz`) and the tests, which hold
/// the decode path to refusing, never panicking, whatever the bytes.
pub fn decode_dimensions(bytes: &[u8]) -> Option<Result<(u32, u32), RunnerError>> {
    let format = image_format(bytes)?;
    Some(
        decode_image(bytes, format)
            .map(|p| (p.width(), p.height()))
            .map_err(|e| image_error("input", format, &e)),
    )
}

/// Decodes `encoded` (GIF: its first frame) within Sluice's limits.
fn decode_image(encoded: &[u8], format: ImageFormat) -> Result<DynamicImage, ImageError> {
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_SIDE);
    limits.max_image_height = Some(MAX_IMAGE_SIDE);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    let mut reader = ImageReader::with_format(Cursor::new(encoded), format);
    reader.limits(limits);
    reader.decode()
}

/// `picture` encoded to send: PNG or JPEG.
fn encode_image(picture: &DynamicImage, png: bool) -> Result<(Vec<u8>, &'static str), ImageError> {
    let mut out = Vec::new();
    if !png {
        let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY);
        DynamicImage::ImageRgb8(picture.to_rgb8()).write_with_encoder(encoder)?;
        return Ok((out, "image/jpeg"));
    }
    // 16-bit and float pictures become 8-bit: nothing a model looks at needs more.
    let eight = if picture.color().has_alpha() {
        DynamicImage::ImageRgba8(picture.to_rgba8())
    } else {
        DynamicImage::ImageRgb8(picture.to_rgb8())
    };
    eight.write_with_encoder(image::codecs::png::PngEncoder::new(&mut out))?;
    Ok((out, "image/png"))
}

fn image_error(path: &str, format: ImageFormat, err: &ImageError) -> RunnerError {
    let mime = format.to_mime_type();
    match err {
        ImageError::Limits(_) => RunnerError::ImageTooLarge(format!(
            "`{path}` is a {mime} image whose header declares more than read_media decodes \
             ({MAX_IMAGE_SIDE} pixels a side, {} of pixels); its raw bytes can be read with \
             offset and length",
            human(MAX_DECODE_ALLOC)
        )),
        // The decoders' messages name no path (they read from memory); cut to a line.
        _ => RunnerError::ImageInvalid {
            path: path.to_owned(),
            reason: format!("{mime}: {}", crate::read::floor_char(&err.to_string(), 200)),
        },
    }
}

fn byte_range(
    file: &mut std::fs::File,
    path: &str,
    size: u64,
    head: &[u8],
    format: Option<ImageFormat>,
    args: &ReadMediaArgs,
) -> Result<Media, RunnerError> {
    let offset = args.offset.unwrap_or(0);
    if offset > size {
        return Err(RunnerError::invalid(format!(
            "offset {offset} is past the end of `{path}`, which is {size} bytes"
        )));
    }
    let want = args.length.unwrap_or(MAX_RANGE_BYTES).clamp(1, MAX_RANGE_BYTES);
    let end = offset.saturating_add(want).min(size);
    // The range with a margin on each side, for secrets that cross its edges.
    let start = offset.saturating_sub(MASK_MARGIN);
    let stop = end.saturating_add(MASK_MARGIN).min(size);
    let io = |e: std::io::Error| RunnerError::Io { path: path.to_owned(), kind: e.kind() };
    file.seek(SeekFrom::Start(start)).map_err(io)?;
    let mut window = Vec::with_capacity((stop - start) as usize);
    file.take(stop - start).read_to_end(&mut window).map_err(io)?;
    let redacted = sluice_core::redact::mask_bytes(&mut window);
    // The file may have shrunk since its size was read: return what is there.
    let from = ((offset - start) as usize).min(window.len());
    let to = ((end - start) as usize).min(window.len());
    let data = window[from..to].to_vec();
    let returned_end = offset + data.len() as u64;
    let mime = match format {
        Some(f) => f.to_mime_type(),
        None => mime_of(head),
    };
    Ok(Media {
        output: ReadMediaOutput {
            path: path.to_owned(),
            kind: MediaKind::Bytes,
            mime: mime.to_owned(),
            size,
            source_mime: None,
            width: None,
            height: None,
            returned_width: None,
            returned_height: None,
            offset: Some(offset),
            length: data.len() as u64,
            next_offset: (returned_end < size).then_some(returned_end),
            redacted,
        },
        data,
    })
}

/// A binary file's MIME type by its first bytes: a few common kinds, else
/// `application/octet-stream`.
fn mime_of(head: &[u8]) -> &'static str {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"%PDF-", "application/pdf"),
        (b"PK\x03\x04", "application/zip"),
        (b"\x1f\x8b", "application/gzip"),
        (b"\0asm", "application/wasm"),
        (b"\x7fELF", "application/x-elf"),
        (b"SQLite format 3\0", "application/vnd.sqlite3"),
    ];
    if let Ok(format) = image::guess_format(head) {
        return format.to_mime_type();
    }
    MAGIC
        .iter()
        .find(|(magic, _)| head.starts_with(magic))
        .map_or("application/octet-stream", |(_, mime)| mime)
}
