//! The vision path (SPEC §12): how many image tokens a picture takes, and — with the `torch` feature —
//! the libtorch preparation that hands an embeddings tensor to the engine. The grid arithmetic
//! (`geometry`) is plain Rust shared by every backend, so builds without libtorch count tokens exactly.

pub mod geometry;

use std::sync::Arc;

pub use geometry::Geometry;

use crate::config::{StartupError, VisionBackendKind, VisionSettings};
use crate::media::Format;

/// What a backend made of one picture.
#[derive(Debug, Clone, PartialEq)]
pub struct VisionInput {
    /// Image tokens the picture takes in the prompt.
    pub tokens: usize,
}

/// A vision preparation backend.
pub trait VisionBackend: Send + Sync + 'static {
    /// The backend's name for `/v1/status`.
    fn name(&self) -> &'static str;
    /// The geometry it follows.
    fn geometry(&self) -> Geometry;
    /// Prepares a picture; the error is a short reason for `[image omitted: …]`.
    fn prepare(&self, picture: &[u8]) -> Result<VisionInput, String>;
}

/// The plain-Rust backend: reads the picture's size from its header and counts tokens.
pub struct GeometryBackend {
    geometry: Geometry,
}

impl VisionBackend for GeometryBackend {
    fn name(&self) -> &'static str {
        "geometry"
    }

    fn geometry(&self) -> Geometry {
        self.geometry
    }

    fn prepare(&self, picture: &[u8]) -> Result<VisionInput, String> {
        let format = Format::sniff(picture).ok_or("the picture is not PNG, JPEG, WebP, GIF or BMP")?;
        let (width, height) = format.dimensions(picture)?;
        Ok(VisionInput { tokens: self.geometry.tokens(height, width) })
    }
}

/// The backend the configuration asks for.
pub fn backend_for(settings: &VisionSettings) -> Result<Arc<dyn VisionBackend>, StartupError> {
    let geometry = Geometry::new(settings.min_pixels, settings.max_pixels);
    match settings.backend {
        VisionBackendKind::Geometry => Ok(Arc::new(GeometryBackend { geometry })),
        VisionBackendKind::Torch => Err(StartupError::Vision {
            key: "vision.backend",
            value: "\"torch\"".into(),
            reason: "this build has no libtorch backend (build with --features torch)".into(),
        }),
    }
}
