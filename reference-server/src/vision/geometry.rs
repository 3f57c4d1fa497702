//! The Qwen2-VL-style grid (SPEC 12.2): sides rounded to multiples of 28 within `min_pixels` and
//! `max_pixels`, 14-pixel patches merged 2×2, so one image token covers a 28×28 square.

/// The longest side a picture may have, in multiples of its shorter one (SPEC 12.2).
pub const MAX_RATIO: u32 = 200;

/// The grid a backend follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Geometry {
    /// Patch side in pixels.
    pub patch_size: u32,
    /// Patches merged per side into one token.
    pub merge_size: u32,
    /// Smallest area after resizing.
    pub min_pixels: u64,
    /// Largest area after resizing.
    pub max_pixels: u64,
}

impl Geometry {
    /// Patch 14, merge 2, with these bounds.
    pub fn new(min_pixels: u64, max_pixels: u64) -> Self {
        Self { patch_size: 14, merge_size: 2, min_pixels, max_pixels }
    }

    /// Whether a picture of this size can be made into image tokens at all: its longer side at most
    /// [`MAX_RATIO`] times its shorter (both Qwen2-VL processors refuse a longer one).
    pub fn takes(&self, height: u32, width: u32) -> bool {
        let (long, short) = (height.max(width), height.min(width).max(1));
        u64::from(long) <= u64::from(short) * u64::from(MAX_RATIO)
    }

    /// The side of one token's square (28).
    pub fn factor(&self) -> u32 {
        self.patch_size * self.merge_size
    }

    /// The (height, width) a picture is resized to.
    pub fn resized(&self, height: u32, width: u32) -> (u32, u32) {
        let factor = f64::from(self.factor());
        let (h, w) = (f64::from(height.max(1)), f64::from(width.max(1)));
        let mut h_bar = (round_half_even(h / factor) * factor).max(factor);
        let mut w_bar = (round_half_even(w / factor) * factor).max(factor);
        if h_bar * w_bar > self.max_pixels as f64 {
            let beta = (h * w / self.max_pixels as f64).sqrt();
            h_bar = ((h / beta / factor).floor() * factor).max(factor);
            w_bar = ((w / beta / factor).floor() * factor).max(factor);
        } else if h_bar * w_bar < self.min_pixels as f64 {
            let beta = (self.min_pixels as f64 / (h * w)).sqrt();
            h_bar = (h * beta / factor).ceil() * factor;
            w_bar = (w * beta / factor).ceil() * factor;
        }
        (h_bar as u32, w_bar as u32)
    }

    /// 14-pixel patches of the resized picture.
    pub fn patches(&self, height: u32, width: u32) -> usize {
        let (h, w) = self.resized(height, width);
        ((h / self.patch_size) * (w / self.patch_size)) as usize
    }

    /// Image tokens: patches merged 2×2.
    pub fn tokens(&self, height: u32, width: u32) -> usize {
        self.patches(height, width) / (self.merge_size * self.merge_size) as usize
    }
}

/// Python's `round`: halves go to the even neighbour.
fn round_half_even(x: f64) -> f64 {
    let rounded = x.round();
    if (x - x.trunc()).abs() == 0.5 && rounded % 2.0 != 0.0 { rounded - x.signum() } else { rounded }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default() -> Geometry {
        Geometry::new(56 * 56, 28 * 28 * 1280)
    }

    #[test]
    fn a_640_by_360_picture_is_299_tokens() {
        assert_eq!(default().resized(360, 640), (364, 644));
        assert_eq!(default().patches(360, 640), 1196);
        assert_eq!(default().tokens(360, 640), 299);
    }

    #[test]
    fn big_pictures_shrink_below_max_pixels_and_tiny_ones_grow() {
        let (h, w) = default().resized(2432, 4320);
        assert!(u64::from(h) * u64::from(w) <= 28 * 28 * 1280);
        assert_eq!((h % 28, w % 28), (0, 0));
        let (h, w) = default().resized(8, 8);
        assert!(u64::from(h) * u64::from(w) >= 56 * 56);
        assert_eq!(default().tokens(8, 8), 4);
    }

    #[test]
    fn halves_round_to_even_like_python() {
        assert_eq!(round_half_even(2.5), 2.0);
        assert_eq!(round_half_even(3.5), 4.0);
        assert_eq!(round_half_even(1.4), 1.0);
        assert_eq!(default().resized(70, 70), (56, 56));
    }
}
