//! The libtorch backend (cargo feature `torch`; SPEC 12.4). The only module that knows about `tch`.
//!
//! decode → smart resize to the shared geometry (bicubic) → normalize with CLIP's mean and std → cut
//! into 14×14 patches → a patch-embedding convolution (kernel 14, stride 14, fixed deterministic
//! weights) → 2×2 patches merged into one row per image token. So the tokens always equal the geometry
//! backend's, and the embeddings (`tokens × 4·EMBED`) are handed to the engine on the CPU.

use std::sync::{Arc, Mutex};

use tch::{Device, Kind, Tensor};

use super::{Embeddings, Geometry, PictureError, VisionBackend, VisionInput};
use crate::config::{StartupError, VisionDevice};
use crate::media::Format;

/// Channels out of the patch embedding, per 14×14 patch.
pub const EMBED: i64 = 64;
/// CLIP's per-channel mean and standard deviation.
pub const MEAN: [f32; 3] = [0.481_454_66, 0.457_827_5, 0.408_210_73];
/// CLIP's per-channel standard deviation.
pub const STD: [f32; 3] = [0.268_629_54, 0.261_302_6, 0.275_777_1];

/// The fixed weight for output channel `k`, input channel `c`, patch pixel (`i`, `j`). A formula, so
/// tests can compute expected embeddings without libtorch and every device gets the same weights.
pub fn weight(k: i64, c: i64, i: i64, j: i64) -> f32 {
    ((0.1 * (k + 1) as f64 + 0.07 * c as f64 + 0.013 * (i * 14 + j) as f64).sin() * 0.02) as f32
}

/// Vision preparation on libtorch.
pub struct TorchBackend {
    geometry: Geometry,
    device: Device,
    /// `[3·14·14, EMBED]`: the convolution as a matrix over flattened patches. A tensor is `Send` but
    /// not `Sync`, hence the lock (libtorch parallelizes each preparation itself).
    weights: Mutex<Tensor>,
}

impl std::fmt::Debug for TorchBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TorchBackend").field("device", &self.device).finish_non_exhaustive()
    }
}

impl TorchBackend {
    /// A backend on `device`; CUDA asked for where none can be used is a startup error naming the setting.
    pub fn new(geometry: Geometry, device: VisionDevice) -> Result<Self, StartupError> {
        let device = match device {
            VisionDevice::Cpu => Device::Cpu,
            VisionDevice::Cuda if tch::Cuda::is_available() => Device::Cuda(0),
            VisionDevice::Cuda => {
                return Err(StartupError::Vision {
                    key: "vision.device",
                    value: "\"cuda\"".into(),
                    reason: "no CUDA device can be used here (libtorch sees none); use \"cpu\"".into(),
                });
            }
        };
        let mut values = Vec::with_capacity((3 * 14 * 14 * EMBED) as usize);
        for c in 0..3 {
            for i in 0..14 {
                for j in 0..14 {
                    for k in 0..EMBED {
                        values.push(weight(k, c, i, j));
                    }
                }
            }
        }
        let weights = Tensor::f_from_slice(&values)
            .and_then(|t| t.f_reshape([3 * 14 * 14, EMBED]))
            .and_then(|t| t.f_to_device(device))
            .map_err(|e| StartupError::Vision {
                key: "vision.backend",
                value: "\"torch\"".into(),
                reason: format!("libtorch failed to start: {e}"),
            })?;
        Ok(Self { geometry, device, weights: Mutex::new(weights) })
    }

    /// The embeddings of decoded RGB pixels (`height` × `width` × 3).
    pub fn embed(&self, rgb: &[u8], height: u32, width: u32) -> Result<Embeddings, tch::TchError> {
        self.embed_to(rgb, height, width, self.geometry.resized(height, width))
    }

    /// [`Self::embed`] onto a grid given as (height, width): the grid of the picture as it came, when the
    /// pixels handed in were shrunk first.
    fn embed_to(&self, rgb: &[u8], height: u32, width: u32, grid: (u32, u32)) -> Result<Embeddings, tch::TchError> {
        let (h, w) = grid;
        let (gh, gw) = (i64::from(h / 14), i64::from(w / 14));
        let pixels = Tensor::f_from_slice(rgb)?
            .f_reshape([1, i64::from(height), i64::from(width), 3])?
            .f_to_device(self.device)?
            .f_permute([0, 3, 1, 2])?
            .f_to_kind(Kind::Float)?
            .f_div_scalar(255.0)?;
        let resized =
            pixels.f_upsample_bicubic2d([i64::from(h), i64::from(w)], false, None, None)?.f_clamp(0.0, 1.0)?;
        let mean = Tensor::f_from_slice(&MEAN)?.f_reshape([1, 3, 1, 1])?.f_to_device(self.device)?;
        let std = Tensor::f_from_slice(&STD)?.f_reshape([1, 3, 1, 1])?.f_to_device(self.device)?;
        let normalized = resized.f_sub(&mean)?.f_div(&std)?;
        // [1, 3, gh, 14, gw, 14] → patches grouped 2×2: [gh/2, gw/2, 2, 2, 3, 14, 14].
        let patches = normalized
            .f_reshape([3, gh / 2, 2, 14, gw / 2, 2, 14])?
            .f_permute([1, 4, 2, 5, 0, 3, 6])?
            .f_contiguous()?
            .f_reshape([(gh / 2) * (gw / 2) * 4, 3 * 14 * 14])?;
        let embedded = {
            let weights = self.weights.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            patches.f_matmul(&weights)?
        };
        let tokens = (gh / 2) * (gw / 2);
        let merged = embedded.f_reshape([tokens, 4 * EMBED])?.f_to_device(Device::Cpu)?;
        let values = Vec::<f32>::try_from(&merged.f_flatten(0, -1)?)?;
        Ok(Embeddings { rows: tokens as usize, width: (4 * EMBED) as usize, values })
    }
}

/// The most pixels a picture may have to be decoded (from its header; 8-bit RGB is then at most 192 MB).
pub const MAX_DECODED_PIXELS: u64 = 64_000_000;

impl VisionBackend for TorchBackend {
    fn geometry(&self) -> Geometry {
        self.geometry
    }

    fn prepare(&self, picture: &[u8]) -> Result<VisionInput, PictureError> {
        let format = Format::sniff(picture).ok_or(PictureError::NotAPicture)?;
        // The size from the header, before anything is decoded: a small file may claim a huge canvas.
        let undecodable = || PictureError::Undecodable(format.extension());
        let (width, height) = format.dimensions(picture).map_err(|_| undecodable())?;
        if !self.geometry.takes(height, width) {
            return Err(PictureError::AspectRatio(width, height));
        }
        if u64::from(width) * u64::from(height) > MAX_DECODED_PIXELS {
            return Err(PictureError::TooManyPixels(MAX_DECODED_PIXELS / 1_000_000));
        }
        let mut reader = image::ImageReader::with_format(std::io::Cursor::new(picture), format.image_format());
        let mut limits = image::Limits::default();
        limits.max_image_width = Some(width);
        limits.max_image_height = Some(height);
        limits.max_alloc = Some(MAX_DECODED_PIXELS * 4 + (16 << 20));
        reader.limits(limits);
        let decoded = reader.decode().map_err(|_| undecodable())?.to_rgb8();
        // A picture far larger than its grid is shrunk in 8-bit pixels first (to twice the grid), so
        // the float tensors stay small (12 bytes a pixel); the grid is still the one of its real size.
        let grid = self.geometry.resized(height, width);
        let (grid_h, grid_w) = grid;
        let decoded = if u64::from(width) * u64::from(height) > 4 * u64::from(grid_h) * u64::from(grid_w) {
            image::imageops::resize(&decoded, grid_w * 2, grid_h * 2, image::imageops::FilterType::Triangle)
        } else {
            decoded
        };
        let (shrunk_w, shrunk_h) = decoded.dimensions();
        let embeddings =
            self.embed_to(decoded.as_raw(), shrunk_h, shrunk_w, grid).map_err(|_| PictureError::Backend)?;
        Ok(VisionInput { tokens: embeddings.rows, embeddings: Some(Arc::new(embeddings)) })
    }
}
