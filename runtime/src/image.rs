//! Image files (PNG, JPEG) as arrays of `f32` samples, for image-processing programs.
//!
//! Samples are interleaved by channel, row by row from the top, each in `[0, 1]` (8-bit
//! values divided by 255, 16-bit ones by 65535). Loading converts to the number of channels
//! asked for: 1 (luma, as the `image` crate weighs it), 3 (RGB) or 4 (RGBA). Saving clamps
//! to `[0, 1]` and rounds to 8 bits; the format follows the file's extension. A file that
//! cannot be read or written is a run-time error that names it and says why.

use crate::error::fail;
use image::{DynamicImage, ImageBuffer};
use std::ffi::{c_char, CStr};

fn path_of(path: *const c_char, what: &str) -> String {
    if path.is_null() {
        fail(&format!("{what}: the path is null"));
    }
    // SAFETY: the callers' contract: a zero-terminated string.
    unsafe { CStr::from_ptr(path) }
        .to_string_lossy()
        .into_owned()
}

fn check_channels(what: &str, channels: i32) {
    if !matches!(channels, 1 | 3 | 4) {
        fail(&format!(
            "{what}: {channels} channels (1, 3 or 4 are supported)"
        ));
    }
}

/// Loads the image file `path` with `channels` channels into new memory (from
/// `anydsl_alloc`, freed with `anydsl_release`) and stores its size in `width` and `height`.
///
/// # Safety
/// `path` is a zero-terminated string; `width` and `height` are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn durin_image_load(
    path: *const c_char,
    channels: i32,
    width: *mut i32,
    height: *mut i32,
) -> *mut f32 {
    let path = path_of(path, "load_image");
    check_channels(&format!("load_image(\"{path}\")"), channels);
    let img = image::open(&path)
        .unwrap_or_else(|e| fail(&format!("cannot load the image `{path}`: {e}")));
    let (w, h) = (img.width(), img.height());
    let samples: Vec<f32> = match channels {
        1 => img.to_luma32f().into_raw(),
        3 => img.to_rgb32f().into_raw(),
        _ => img.to_rgba32f().into_raw(),
    };
    let p = crate::memory::anydsl_alloc(0, (samples.len() * 4) as i64) as *mut f32;
    // SAFETY: `p` holds `samples.len()` floats (just allocated, aligned to 64 bytes).
    std::ptr::copy_nonoverlapping(samples.as_ptr(), p, samples.len());
    *width = w as i32;
    *height = h as i32;
    p
}

/// Saves `width * height * channels` samples at `data` to the image file `path` (PNG or
/// JPEG by its extension).
///
/// # Safety
/// `path` is a zero-terminated string; `data` holds the samples.
#[no_mangle]
pub unsafe extern "C" fn durin_image_save(
    path: *const c_char,
    data: *const f32,
    width: i32,
    height: i32,
    channels: i32,
) {
    let path = path_of(path, "save_image");
    let what = format!("save_image(\"{path}\")");
    check_channels(&what, channels);
    if width <= 0 || height <= 0 {
        fail(&format!("{what}: the size {width}x{height} is empty"));
    }
    let n = width as usize * height as usize * channels as usize;
    // SAFETY: the callers' contract.
    let samples = std::slice::from_raw_parts(data, n);
    let bytes: Vec<u8> = samples
        .iter()
        .map(|&x| (x.clamp(0.0, 1.0) * 255.0).round() as u8)
        .collect();
    let (w, h) = (width as u32, height as u32);
    let img = match channels {
        1 => ImageBuffer::from_raw(w, h, bytes).map(DynamicImage::ImageLuma8),
        3 => ImageBuffer::from_raw(w, h, bytes).map(DynamicImage::ImageRgb8),
        _ => ImageBuffer::from_raw(w, h, bytes).map(DynamicImage::ImageRgba8),
    }
    .unwrap_or_else(|| fail(&format!("{what}: the samples do not fill the image")));
    // JPEG has no alpha channel.
    let img = match (channels, image::ImageFormat::from_path(&path)) {
        (4, Ok(image::ImageFormat::Jpeg)) => DynamicImage::ImageRgb8(img.to_rgb8()),
        _ => img,
    };
    img.save(&path)
        .unwrap_or_else(|e| fail(&format!("cannot save the image `{path}`: {e}")));
}

crate::symbol_table!(durin_image_load, durin_image_save);

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    #[test]
    fn a_saved_image_loads_back() {
        let dir = std::env::temp_dir().join(format!("durin-image-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ramp.png");
        let c = CString::new(path.to_string_lossy().as_bytes()).unwrap();
        // A 4x2 RGB ramp of values k/255.
        let samples: Vec<f32> = (0..24).map(|k| (k * 10) as f32 / 255.0).collect();
        unsafe {
            durin_image_save(c.as_ptr(), samples.as_ptr(), 4, 2, 3);
            let (mut w, mut h) = (0, 0);
            let p = durin_image_load(c.as_ptr(), 3, &mut w, &mut h);
            assert_eq!((w, h), (4, 2));
            let back = std::slice::from_raw_parts(p, 24);
            for (a, b) in back.iter().zip(&samples) {
                assert!((a - b).abs() < 1e-6, "{a} vs {b}");
            }
            crate::memory::anydsl_release(0, p.cast());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
