//! `read_media`'s decode path (`sluice_runner::decode_dimensions`): images from the project are
//! untrusted bytes handed to the PNG, JPEG, GIF and WebP decoders.
//!
//! Properties, on any bytes: decoding returns, never panics; a decoded picture is within the
//! side limit; a refusal is `image_too_large` or `image_invalid`, nothing else.

use sluice_core::{Coded, ErrorCode};
use sluice_runner::{MAX_IMAGE_SIDE, decode_dimensions};

pub fn image_decode(data: &[u8]) {
    match decode_dimensions(data) {
        None | Some(Ok((1..=MAX_IMAGE_SIDE, 1..=MAX_IMAGE_SIDE))) => {}
        Some(Ok(dims)) => panic!("decoded {dims:?}, outside the limits"),
        Some(Err(e)) => assert!(
            matches!(e.code(), ErrorCode::ImageTooLarge | ErrorCode::ImageInvalid),
            "{:?}: {e}",
            e.code()
        ),
    }
}
