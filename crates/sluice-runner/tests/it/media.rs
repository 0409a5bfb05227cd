//! `read_media` on real files: images of every supported format decoded and bounded, the bombs
//! and the broken ones refused with their codes, byte ranges, the shield and links out, and the
//! decode path held to never panicking on mutated bytes.

use std::fs;
use std::io::Cursor;
use std::time::{Duration, Instant};

use image::{DynamicImage, ImageFormat, Rgb, RgbImage, Rgba, RgbaImage};
use sluice_core::{Coded, ErrorCode};
use sluice_runner::*;

use crate::rig::{Rig, assert_clean, rig};

fn media(rig: &Rig, path: &str) -> Result<Media, RunnerError> {
    read_media(&rig.ws, &ReadMediaArgs { path: path.into(), ..Default::default() })
}

fn code(rig: &Rig, path: &str) -> ErrorCode {
    let err = media(rig, path).unwrap_err();
    assert_clean(rig, &err.to_string());
    err.code()
}

/// A picture with detail in it (so a codec cannot reduce it to nothing).
fn picture(width: u32, height: u32) -> RgbaImage {
    RgbaImage::from_fn(width, height, |x, y| {
        Rgba([(x % 256) as u8, (y % 256) as u8, ((x ^ y) % 256) as u8, 255])
    })
}

fn encode(image: DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Vec::new();
    image.write_to(&mut Cursor::new(&mut out), format).unwrap();
    out
}

fn write(rig: &Rig, rel: &str, bytes: &[u8]) {
    let p = rig.proj.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, bytes).unwrap();
}

/// Decodes what read_media returned, as a client would.
fn returned(m: &Media) -> DynamicImage {
    let format = ImageFormat::from_mime_type(&m.output.mime).unwrap();
    image::load_from_memory_with_format(&m.data, format).unwrap()
}

/// The CRC-32 of PNG chunks (ISO 3309), computed here so the crafted files are valid.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// A PNG of a few dozen bytes whose header (with valid CRCs) declares `width`×`height` RGBA.
fn png_declaring(width: u32, height: u32) -> Vec<u8> {
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &ihdr);
    // A zlib stream of a few zero bytes: the start of an all-transparent picture.
    chunk(&mut png, b"IDAT", &[0x78, 0x9c, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01]);
    chunk(&mut png, b"IEND", &[]);
    png
}

#[test]
fn read_media_returns_a_one_pixel_png_as_a_png() {
    let rig = rig();
    write(&rig, "img/dot.png", &encode(picture(1, 1).into(), ImageFormat::Png));
    let m = media(&rig, "img/dot.png").unwrap();
    let o = &m.output;
    assert_eq!(
        (o.kind, o.mime.as_str(), o.source_mime.as_deref()),
        (MediaKind::Image, "image/png", Some("image/png"))
    );
    assert_eq!(
        (o.width, o.height, o.returned_width, o.returned_height),
        (Some(1), Some(1), Some(1), Some(1))
    );
    assert_eq!(o.length, m.data.len() as u64);
    assert_eq!(returned(&m).to_rgba8().get_pixel(0, 0), &Rgba([0, 0, 0, 255]));
    assert_clean(&rig, &serde_json::to_string(o).unwrap());
}

#[test]
fn read_media_scales_a_20_megapixel_png_down_to_the_bound() {
    let rig = rig();
    let big = RgbImage::from_fn(5000, 4000, |x, y| Rgb([(x / 20) as u8, (y / 16) as u8, 128]));
    let png = encode(big.into(), ImageFormat::Png);
    assert!((png.len() as u64) < MAX_IMAGE_FILE_BYTES);
    write(&rig, "shot.png", &png);
    let m = media(&rig, "shot.png").unwrap();
    let o = &m.output;
    assert_eq!((o.width, o.height), (Some(5000), Some(4000)));
    assert_eq!(o.returned_width, Some(DEFAULT_MAX_DIMENSION));
    let h = o.returned_height.unwrap();
    assert!((1253..=1255).contains(&h), "{h}");
    let back = returned(&m);
    assert_eq!((back.width(), back.height()), (DEFAULT_MAX_DIMENSION, h));

    // A smaller bound on request; never scaled up.
    let small = read_media(
        &rig.ws,
        &ReadMediaArgs { path: "shot.png".into(), max_dimension: Some(100), ..Default::default() },
    )
    .unwrap();
    assert_eq!(small.output.returned_width, Some(100));
    write(&rig, "small.png", &encode(picture(40, 30).into(), ImageFormat::Png));
    let same = read_media(
        &rig.ws,
        &ReadMediaArgs {
            path: "small.png".into(),
            max_dimension: Some(4096),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!((same.output.returned_width, same.output.returned_height), (Some(40), Some(30)));
}

#[test]
fn read_media_decodes_jpeg_gif_and_webp_by_content_whatever_the_name() {
    let rig = rig();
    let rgb = DynamicImage::ImageRgb8(DynamicImage::from(picture(40, 30)).to_rgb8());
    write(&rig, "photo.jpg", &encode(rgb.clone(), ImageFormat::Jpeg));
    write(&rig, "anim.gif", &encode(picture(40, 30).into(), ImageFormat::Gif));
    write(&rig, "pic.webp", &encode(picture(40, 30).into(), ImageFormat::WebP));
    // Named like a PNG, JPEG inside: its content decides.
    write(&rig, "misnamed.png", &encode(rgb, ImageFormat::Jpeg));
    write(&rig, "no_extension", &encode(picture(40, 30).into(), ImageFormat::WebP));
    for (path, source, mime) in [
        ("photo.jpg", "image/jpeg", "image/jpeg"),
        ("anim.gif", "image/gif", "image/png"),
        ("pic.webp", "image/webp", "image/png"),
        ("misnamed.png", "image/jpeg", "image/jpeg"),
        ("no_extension", "image/webp", "image/png"),
    ] {
        let m = media(&rig, path).unwrap();
        let o = &m.output;
        assert_eq!(o.kind, MediaKind::Image, "{path}");
        assert_eq!((o.source_mime.as_deref(), o.mime.as_str()), (Some(source), mime), "{path}");
        assert_eq!((o.width, o.height), (Some(40), Some(30)), "{path}");
        let back = returned(&m);
        assert_eq!((back.width(), back.height()), (40, 30), "{path}");
    }
}

#[test]
fn read_media_refuses_a_truncated_png_as_image_invalid() {
    let rig = rig();
    let png = encode(picture(64, 64).into(), ImageFormat::Png);
    write(&rig, "cut.png", &png[..png.len() / 2]);
    assert_eq!(code(&rig, "cut.png"), ErrorCode::ImageInvalid);
    write(&rig, "header_only.png", &png[..8]);
    assert_eq!(code(&rig, "header_only.png"), ErrorCode::ImageInvalid);
    // Its bytes are still readable as bytes.
    let raw = read_media(
        &rig.ws,
        &ReadMediaArgs { path: "cut.png".into(), offset: Some(0), ..Default::default() },
    )
    .unwrap();
    assert_eq!(raw.output.kind, MediaKind::Bytes);
    assert_eq!(raw.data, png[..png.len() / 2]);
}

#[test]
fn read_media_refuses_a_png_bomb_at_once_as_image_too_large() {
    let rig = rig();
    // Over the side limit, and within it but over the memory limit (16000² RGBA is 1 GB).
    for (name, width, height) in
        [("bomb.png", 100_000, 100_000), ("wide.png", 1_000_000, 1), ("square.png", 16_000, 16_000)]
    {
        let png = png_declaring(width, height);
        assert!(png.len() < 100);
        write(&rig, name, &png);
        let started = Instant::now();
        let err = media(&rig, name).unwrap_err();
        assert_eq!(err.code(), ErrorCode::ImageTooLarge, "{name}: {err}");
        assert!(started.elapsed() < Duration::from_secs(2), "{name} took {:?}", started.elapsed());
    }
    assert_eq!(
        decode_dimensions(&png_declaring(100_000, 100_000)).unwrap().unwrap_err().code(),
        ErrorCode::ImageTooLarge
    );
}

#[test]
fn read_media_refuses_an_image_file_over_the_size_limit() {
    let rig = rig();
    let mut big = png_declaring(10, 10);
    big.resize(MAX_IMAGE_FILE_BYTES as usize + 1, 0);
    write(&rig, "huge.png", &big);
    assert_eq!(code(&rig, "huge.png"), ErrorCode::ImageTooLarge);
}

#[test]
fn read_media_returns_a_byte_range_of_a_binary_file() {
    let rig = rig();
    let blob: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
    write(&rig, "data/blob.bin", &blob);
    let range = |offset: Option<u64>, length: Option<u64>| {
        read_media(
            &rig.ws,
            &ReadMediaArgs { path: "data/blob.bin".into(), offset, length, ..Default::default() },
        )
    };
    let m = range(Some(10), Some(20)).unwrap();
    let o = &m.output;
    assert_eq!((o.kind, o.mime.as_str()), (MediaKind::Bytes, "application/octet-stream"));
    assert_eq!((o.size, o.offset, o.length, o.next_offset), (3000, Some(10), 20, Some(30)));
    assert!(!o.redacted);
    assert_eq!(m.data, blob[10..30]);

    let whole = range(None, None).unwrap();
    assert_eq!((whole.data.as_slice(), whole.output.next_offset), (blob.as_slice(), None));
    let tail = range(Some(2990), Some(100)).unwrap();
    assert_eq!((tail.data.as_slice(), tail.output.next_offset), (&blob[2990..], None));
    let end = range(Some(3000), None).unwrap();
    assert!(end.data.is_empty());
    assert_eq!(range(Some(3001), None).unwrap_err().code(), ErrorCode::InvalidArgument);

    // The length is capped at 1 MiB.
    write(&rig, "big.bin", &vec![0u8; 3 * 1024 * 1024]);
    let capped = read_media(
        &rig.ws,
        &ReadMediaArgs { path: "big.bin".into(), length: Some(u64::MAX), ..Default::default() },
    )
    .unwrap();
    assert_eq!(capped.data.len() as u64, MAX_RANGE_BYTES);
    assert_eq!(capped.output.next_offset, Some(MAX_RANGE_BYTES));

    // A known kind by its first bytes.
    write(&rig, "doc.pdf", b"%PDF-1.7\n\0\x01\x02");
    assert_eq!(media(&rig, "doc.pdf").unwrap().output.mime, "application/pdf");
}

#[test]
fn read_media_masks_secrets_in_binary_ranges_even_across_the_range_edge() {
    let rig = rig();
    let token = format!("slc_{}", "k3".repeat(16));
    let mut blob = vec![0u8; 100];
    blob.extend_from_slice(token.as_bytes());
    blob.extend_from_slice(&[0u8; 100]);
    write(&rig, "cache.bin", &blob);
    let m = media(&rig, "cache.bin").unwrap();
    assert!(m.output.redacted);
    assert!(!String::from_utf8_lossy(&m.data).contains("slc_"));
    assert_eq!(m.data.len(), blob.len());
    // The range ends inside the token, then starts inside it: neither half comes back.
    for (offset, length) in [(0, 110), (110, 50)] {
        let part = read_media(
            &rig.ws,
            &ReadMediaArgs {
                path: "cache.bin".into(),
                offset: Some(offset),
                length: Some(length),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(part.output.redacted, "{offset}");
        assert!(part.data.iter().all(|&b| b == 0 || b == b'*'), "{offset}");
    }
}

#[test]
fn read_media_sends_text_and_svg_to_read_file() {
    let rig = rig();
    write(&rig, "logo.svg", br#"<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>"#);
    assert_eq!(code(&rig, "logo.svg"), ErrorCode::TextFile);
    assert_eq!(code(&rig, "README.md"), ErrorCode::TextFile);
    let err = media(&rig, "logo.svg").unwrap_err().to_string();
    assert!(err.contains("read_file"), "{err}");
    // And read_file sends binary files here.
    write(&rig, "blob.bin", b"\0\x01\x02");
    let err = read_file(&rig.ws, &ReadFileArgs { path: "blob.bin".into(), ..Default::default() })
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::BinaryFile);
    assert!(err.to_string().contains("read_media"), "{err}");
}

#[test]
fn read_media_is_refused_where_read_file_is_shielded_links_out_and_folders() {
    let rig = rig();
    let png = encode(picture(2, 2).into(), ImageFormat::Png);
    // Shielded by name (`id_rsa*`, `*.key`, `.ssh/**`), image content or not.
    for name in ["id_rsa.png", "cert.key", ".ssh/shot.png", ".git/x.png"] {
        write(&rig, name, &png);
        assert_eq!(code(&rig, name), ErrorCode::PathShielded, "{name}");
    }
    // The rig's shielded files, and a link to one (`notes.txt` → `.env`).
    for name in [".env", "id_rsa", "notes.txt"] {
        assert_eq!(code(&rig, name), ErrorCode::PathShielded, "{name}");
    }
    // A link to a file outside the root; paths that leave it.
    std::os::unix::fs::symlink(rig.base.join("canary.txt"), rig.proj.join("out.png")).unwrap();
    for name in ["k", "out.png", "evil/x", "../canary.txt", "l/passwd"] {
        let c = code(&rig, name);
        assert!(
            matches!(c, ErrorCode::PathOutsideProject | ErrorCode::PathInvalid),
            "{name}: {c:?}"
        );
    }
    assert_eq!(code(&rig, "src"), ErrorCode::WrongKind);
    assert_eq!(code(&rig, "nope.png"), ErrorCode::NotFound);
    assert_eq!(code(&rig, "."), ErrorCode::InvalidArgument);
}

/// A small deterministic generator, so a failure replays.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn image_decode_never_panics_on_truncated_or_mutated_images() {
    let seeds = [
        encode(picture(9, 7).into(), ImageFormat::Png),
        encode(DynamicImage::from(picture(9, 7)).to_rgb8().into(), ImageFormat::Jpeg),
        encode(picture(9, 7).into(), ImageFormat::Gif),
        encode(picture(9, 7).into(), ImageFormat::WebP),
        png_declaring(40_000, 3),
    ];
    let mut rng = XorShift(0x5eed_1234_abcd_0042);
    for seed in &seeds {
        assert!(decode_dimensions(seed).is_some());
        for cut in 0..seed.len() {
            let _ = decode_dimensions(&seed[..cut]);
        }
        for _ in 0..400 {
            let mut bytes = seed.clone();
            for _ in 0..1 + rng.next() % 4 {
                let idx = (rng.next() % bytes.len() as u64) as usize;
                bytes[idx] = rng.next() as u8;
            }
            if let Some(Ok((w, h))) = decode_dimensions(&bytes) {
                assert!(w <= MAX_IMAGE_SIDE && h <= MAX_IMAGE_SIDE);
            }
        }
    }
}
