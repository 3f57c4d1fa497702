//! SPEC 12.2's geometry as the harness models it, from the clause alone (never the reference server's
//! code): how many image tokens a picture takes, and which pictures take none. The vision cases compute
//! their expected values here; `tests/geometry_processors.rs` compares it with the Qwen2-VL team's own
//! `smart_resize` (qwen-vl-utils and transformers) over thousands of sizes.

/// SPEC 12.2's grid, written here from the clause (never the server's code): sides rounded to
/// multiples of 28 (halves to even), at least 28; over `max_pixels` both scaled down by
/// √(h·w/max) and floored; under `min_pixels` scaled up by √(min/(h·w)) and ceiled; one token per
/// 28×28 square.
pub fn expected_tokens(width: u32, height: u32) -> u64 {
    expected_tokens_within(width, height, DEFAULT_MIN_PIXELS, DEFAULT_MAX_PIXELS)
}

/// The longest side a picture may have, in multiples of its shorter (12.2, as both Qwen2-VL processors
/// have it: `max(h, w) / min(h, w) > 200` is refused).
pub const MAX_RATIO: u32 = 200;

/// Whether 12.2 makes a `width` × `height` picture into image tokens at all.
pub fn takes_tokens(width: u32, height: u32) -> bool {
    f64::from(width.max(height)) / f64::from(width.min(height).max(1)) <= f64::from(MAX_RATIO)
}

/// 12.2's default `min_pixels` (56·56) and `max_pixels` (28·28·1280).
pub const DEFAULT_MIN_PIXELS: u32 = 56 * 56;
/// See [`DEFAULT_MIN_PIXELS`].
pub const DEFAULT_MAX_PIXELS: u32 = 28 * 28 * 1280;

/// [`expected_tokens`] under configured `vision.min_pixels` and `vision.max_pixels` (1.10).
pub fn expected_tokens_within(width: u32, height: u32, min_pixels: u32, max_pixels: u32) -> u64 {
    const FACTOR: f64 = 28.0;
    let (min_px, max_px) = (f64::from(min_pixels), f64::from(max_pixels));
    let (h, w) = (f64::from(height.max(1)), f64::from(width.max(1)));
    let mut h_bar = ((h / FACTOR).round_ties_even() * FACTOR).max(FACTOR);
    let mut w_bar = ((w / FACTOR).round_ties_even() * FACTOR).max(FACTOR);
    if h_bar * w_bar > max_px {
        let beta = (h * w / max_px).sqrt();
        h_bar = ((h / beta / FACTOR).floor() * FACTOR).max(FACTOR);
        w_bar = ((w / beta / FACTOR).floor() * FACTOR).max(FACTOR);
    } else if h_bar * w_bar < min_px {
        let beta = (min_px / (h * w)).sqrt();
        h_bar = (h * beta / FACTOR).ceil() * FACTOR;
        w_bar = (w * beta / FACTOR).ceil() * FACTOR;
    }
    ((h_bar / FACTOR) as u64) * ((w_bar / FACTOR) as u64)
}
