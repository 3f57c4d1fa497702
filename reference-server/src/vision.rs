//! The vision path (SPEC §12): how many image tokens a picture takes, and — with the `torch` feature —
//! the libtorch preparation that hands an embeddings tensor to the engine. The grid arithmetic
//! (`geometry`) is plain Rust shared by every backend, so builds without libtorch count tokens exactly.

pub mod geometry;
#[cfg(feature = "torch")]
pub mod torch;

use std::sync::Arc;

pub use geometry::Geometry;

use crate::config::{StartupError, VisionBackendKind, VisionDevice, VisionSettings};
use crate::media::Format;
use crate::media::format::HeaderError;

/// What a backend made of one picture.
#[derive(Debug, Clone, PartialEq)]
pub struct VisionInput {
    /// Image tokens the picture takes in the prompt.
    pub tokens: usize,
    /// The picture's embeddings, one row per image token, when the backend computes them.
    pub embeddings: Option<Arc<Embeddings>>,
}

/// Embeddings handed to the engine: `rows` × `width` values, row-major, on the CPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Embeddings {
    /// One per image token.
    pub rows: usize,
    /// Values per row.
    pub width: usize,
    /// The values.
    pub values: Vec<f32>,
}

/// Why a picture could not be prepared: the reason in `[image omitted: …]`, or a 400's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PictureError {
    /// No magic of a known format.
    #[error("the picture is not PNG, JPEG, WebP, GIF or BMP")]
    NotAPicture,
    /// The header does not give the size.
    #[error(transparent)]
    Header(#[from] HeaderError),
    /// The pixels do not decode.
    #[error("the {0} picture could not be decoded")]
    Undecodable(&'static str),
    /// Its longer side is more than 200 times its shorter (SPEC 12.2).
    #[error("the picture's aspect ratio is over 200 ({0}x{1})")]
    AspectRatio(u32, u32),
    /// The canvas the header claims is too large to decode.
    #[error("the picture has more than {0} megapixels")]
    TooManyPixels(u64),
    /// The backend itself failed.
    #[error("libtorch could not prepare the picture")]
    Backend,
}

/// A vision preparation backend.
pub trait VisionBackend: Send + Sync + 'static {
    /// The geometry it follows.
    fn geometry(&self) -> Geometry;
    /// Prepares a picture.
    fn prepare(&self, picture: &[u8]) -> Result<VisionInput, PictureError>;
}

/// The plain-Rust backend: reads the picture's size from its header and counts tokens.
pub struct GeometryBackend {
    geometry: Geometry,
}

impl VisionBackend for GeometryBackend {
    fn geometry(&self) -> Geometry {
        self.geometry
    }

    fn prepare(&self, picture: &[u8]) -> Result<VisionInput, PictureError> {
        let format = Format::sniff(picture).ok_or(PictureError::NotAPicture)?;
        let (width, height) = format.dimensions(picture)?;
        if !self.geometry.takes(height, width) {
            return Err(PictureError::AspectRatio(width, height));
        }
        Ok(VisionInput { tokens: self.geometry.tokens(height, width), embeddings: None })
    }
}

/// The backend the configuration asks for.
pub fn backend_for(settings: &VisionSettings) -> Result<Arc<dyn VisionBackend>, StartupError> {
    let geometry = Geometry::new(settings.min_pixels, settings.max_pixels);
    match settings.backend {
        // The geometry backend reads sizes from headers and runs on no device: CUDA asked for it would
        // be a promise not kept (SPEC 1.10).
        VisionBackendKind::Geometry if settings.device == VisionDevice::Cuda => Err(StartupError::Vision {
            key: "vision.device",
            value: "\"cuda\"".into(),
            reason: "the geometry backend runs on no device: use \"cpu\", or backend \"torch\"".into(),
        }),
        VisionBackendKind::Geometry => Ok(Arc::new(GeometryBackend { geometry })),
        #[cfg(feature = "torch")]
        VisionBackendKind::Torch => Ok(Arc::new(torch::TorchBackend::new(geometry, settings.device)?)),
        #[cfg(not(feature = "torch"))]
        VisionBackendKind::Torch => Err(StartupError::Vision {
            key: "vision.backend",
            value: "\"torch\"".into(),
            reason: "this build has no libtorch backend (build with --features torch)".into(),
        }),
    }
}
