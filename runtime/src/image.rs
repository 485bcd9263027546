//! Image files (PNG, JPEG, and the PGM and PPM formats of Netpbm) as arrays of `f32`
//! samples, for image-processing programs.
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

/// Saves `width * height * channels` samples at `data` to the image file `path` (PNG, JPEG,
/// PGM or PPM by its extension).
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
    let ext = std::path::Path::new(&path)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let saved = match ext.as_deref() {
        // Netpbm's binary gray and color maps (the encoder's default for these names is
        // PAM, which readers of `.pgm` and `.ppm` files do not expect).
        Some(e @ ("pgm" | "ppm")) => save_netpbm(&path, &img, e == "pgm"),
        _ => img.save(&path),
    };
    saved.unwrap_or_else(|e| fail(&format!("cannot save the image `{path}`: {e}")));
}

fn save_netpbm(path: &str, img: &DynamicImage, gray: bool) -> image::ImageResult<()> {
    use image::codecs::pnm::{PnmEncoder, PnmSubtype, SampleEncoding};
    use image::ImageEncoder;
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let (w, h) = (img.width(), img.height());
    if gray {
        let enc = PnmEncoder::new(file).with_subtype(PnmSubtype::Graymap(SampleEncoding::Binary));
        enc.write_image(img.to_luma8().as_raw(), w, h, image::ExtendedColorType::L8)
    } else {
        let enc = PnmEncoder::new(file).with_subtype(PnmSubtype::Pixmap(SampleEncoding::Binary));
        enc.write_image(img.to_rgb8().as_raw(), w, h, image::ExtendedColorType::Rgb8)
    }
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

    #[test]
    fn netpbm_files_load_and_save() {
        let dir = std::env::temp_dir().join(format!("durin-pnm-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let load = |path: &std::path::Path, channels: i32| unsafe {
            let c = CString::new(path.to_string_lossy().as_bytes()).unwrap();
            let (mut w, mut h) = (0, 0);
            let p = durin_image_load(c.as_ptr(), channels, &mut w, &mut h);
            let n = (w * h * channels) as usize;
            let v: Vec<u8> = std::slice::from_raw_parts(p, n)
                .iter()
                .map(|x| (x * 255.0).round() as u8)
                .collect();
            crate::memory::anydsl_release(0, p.cast());
            (w, h, v)
        };
        // Binary and ASCII gray maps with a comment line, as image editors write them.
        let p5 = dir.join("binary.pgm");
        let mut bytes = b"P5\n# made by hand\n3 2\n255\n".to_vec();
        bytes.extend([0u8, 17, 34, 200, 250, 255]);
        std::fs::write(&p5, bytes).unwrap();
        assert_eq!(load(&p5, 1), (3, 2, vec![0, 17, 34, 200, 250, 255]));
        let p2 = dir.join("ascii.pgm");
        std::fs::write(&p2, "P2\n# made by hand\n2 2\n15\n0 5\n10 15\n").unwrap();
        assert_eq!(load(&p2, 1), (2, 2, vec![0, 85, 170, 255]));
        // A color map with 3 channels, saved and loaded back.
        let ppm = dir.join("ramp.ppm");
        let samples: Vec<f32> = (0..18).map(|k| (k * 13) as f32 / 255.0).collect();
        let c = CString::new(ppm.to_string_lossy().as_bytes()).unwrap();
        unsafe { durin_image_save(c.as_ptr(), samples.as_ptr(), 3, 2, 3) };
        assert!(std::fs::read(&ppm).unwrap().starts_with(b"P6"));
        // A gray map saved from one channel is a binary PGM (P5).
        let pgm = dir.join("gray.pgm");
        let c = CString::new(pgm.to_string_lossy().as_bytes()).unwrap();
        unsafe { durin_image_save(c.as_ptr(), samples.as_ptr(), 3, 2, 1) };
        assert!(std::fs::read(&pgm).unwrap().starts_with(b"P5"));
        let want: Vec<u8> = (0..6).map(|k| (k * 13) as u8).collect();
        assert_eq!(load(&pgm, 1), (3, 2, want));
        let want: Vec<u8> = (0..18).map(|k| (k * 13) as u8).collect();
        assert_eq!(load(&ppm, 3), (3, 2, want));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
