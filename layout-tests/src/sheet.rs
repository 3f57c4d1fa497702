//! Contact sheets: one PNG per step of the tour, the five widths' screenshots side by side at half
//! size, each labelled with its width (a small bitmap font of our own: no font files needed).

use std::path::Path;

use image::imageops::{FilterType, overlay, resize};
use image::{Rgb, RgbImage};

/// The scale screenshots are drawn at.
const SCALE: u32 = 2;
const GAP: u32 = 12;
const LABEL: u32 = 26;
const TITLE: u32 = 34;
const INK: Rgb<u8> = Rgb([32, 36, 44]);
const PAPER: Rgb<u8> = Rgb([255, 255, 255]);
const MISSING: Rgb<u8> = Rgb([222, 225, 230]);

/// Glyphs 5 wide and 7 high, one string a row, `#` inked.
fn glyph(c: char) -> [&'static str; 7] {
    match c {
        '0' => [".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."],
        '1' => ["..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."],
        '2' => [".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"],
        '3' => ["#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."],
        '4' => ["...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."],
        '5' => ["#####", "#....", "####.", "....#", "....#", "#...#", ".###."],
        '6' => ["..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."],
        '7' => ["#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."],
        '8' => [".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."],
        '9' => [".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."],
        'a' => [".....", ".....", ".###.", "....#", ".####", "#...#", ".####"],
        'c' => [".....", ".....", ".###.", "#....", "#....", "#...#", ".###."],
        'd' => ["....#", "....#", ".##.#", "##..#", "#...#", "#...#", ".####"],
        'e' => [".....", ".....", ".###.", "#...#", "#####", "#....", ".###."],
        'f' => ["..##.", ".#..#", ".#...", "###..", ".#...", ".#...", ".#..."],
        'g' => [".....", ".####", "#...#", "#...#", ".####", "....#", ".###."],
        'i' => ["..#..", ".....", ".##..", "..#..", "..#..", "..#..", ".###."],
        'l' => [".##..", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."],
        'm' => [".....", ".....", "##.#.", "#.#.#", "#.#.#", "#...#", "#...#"],
        'n' => [".....", ".....", "#.##.", "##..#", "#...#", "#...#", "#...#"],
        'o' => [".....", ".....", ".###.", "#...#", "#...#", "#...#", ".###."],
        'p' => [".....", ".....", "####.", "#...#", "####.", "#....", "#...."],
        'r' => [".....", ".....", "#.##.", "##..#", "#....", "#....", "#...."],
        's' => [".....", ".....", ".###.", "#....", ".###.", "....#", "####."],
        't' => [".#...", ".#...", "###..", ".#...", ".#...", ".#..#", "..##."],
        'u' => [".....", ".....", "#...#", "#...#", "#...#", "#..##", ".##.#"],
        'x' => [".....", ".....", "#...#", ".#.#.", "..#..", ".#.#.", "#...#"],
        '-' => [".....", ".....", ".....", "#####", ".....", ".....", "....."],
        ' ' => [".....", ".....", ".....", ".....", ".....", ".....", "....."],
        _ => ["#####", "#...#", "#...#", "#...#", "#...#", "#...#", "#####"],
    }
}

/// Draws `text` with its top-left corner at (x, y), each dot `size` pixels square.
pub fn draw_text(canvas: &mut RgbImage, text: &str, x: u32, y: u32, size: u32) {
    for (i, c) in text.chars().enumerate() {
        let left = x + i as u32 * 6 * size;
        for (row, bits) in glyph(c).iter().enumerate() {
            for (col, bit) in bits.bytes().enumerate() {
                if bit != b'#' {
                    continue;
                }
                for dy in 0..size {
                    for dx in 0..size {
                        let (px, py) = (left + col as u32 * size + dx, y + row as u32 * size + dy);
                        if px < canvas.width() && py < canvas.height() {
                            canvas.put_pixel(px, py, INK);
                        }
                    }
                }
            }
        }
    }
}

/// One step's sheet: `shots` are (width, screenshot file if there is one), in width order; `height`
/// the viewport's. A width without a screenshot is a grey panel marked `missing`.
pub fn contact_sheet(step: &str, shots: &[(u32, Option<&Path>)], height: u32) -> Result<RgbImage, image::ImageError> {
    let panel_height = height / SCALE;
    let width = GAP + shots.iter().map(|(w, _)| w / SCALE + GAP).sum::<u32>();
    let mut sheet = RgbImage::from_pixel(width, TITLE + LABEL + panel_height + GAP, PAPER);
    draw_text(&mut sheet, step, GAP, 8, 3);
    let mut x = GAP;
    for (viewport, shot) in shots {
        let panel_width = viewport / SCALE;
        draw_text(&mut sheet, &format!("{viewport} px"), x, TITLE + 4, 2);
        let top = TITLE + LABEL;
        match shot {
            Some(path) => {
                let picture = image::open(path)?.to_rgb8();
                let scaled = resize(&picture, panel_width, picture.height() / SCALE, FilterType::Triangle);
                overlay(&mut sheet, &scaled, i64::from(x), i64::from(top));
            }
            None => {
                overlay(
                    &mut sheet,
                    &RgbImage::from_pixel(panel_width, panel_height, MISSING),
                    i64::from(x),
                    i64::from(top),
                );
                draw_text(&mut sheet, "missing", x + 8, top + 8, 2);
            }
        }
        x += panel_width + GAP;
    }
    Ok(sheet)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_ink_where_their_glyphs_say_and_nowhere_else() {
        let mut canvas = RgbImage::from_pixel(40, 10, PAPER);
        draw_text(&mut canvas, "1", 0, 0, 1);
        let inked: Vec<(u32, u32)> =
            canvas.enumerate_pixels().filter(|(_, _, p)| **p == INK).map(|(x, y, _)| (x, y)).collect();
        assert_eq!(inked.len(), glyph('1').iter().map(|r| r.matches('#').count()).sum::<usize>());
        assert!(inked.contains(&(2, 0)) && inked.contains(&(1, 6)) && !inked.contains(&(0, 0)));
    }

    #[test]
    fn a_sheet_holds_every_width_side_by_side() {
        let sheet = contact_sheet("collapsed", &[(320, None), (390, None)], 800).expect("a sheet");
        assert_eq!(sheet.width(), GAP + (160 + GAP) + (195 + GAP));
        assert_eq!(sheet.height(), TITLE + LABEL + 400 + GAP);
        assert_eq!(*sheet.get_pixel(GAP + 1, TITLE + LABEL + 300), MISSING);
    }
}
