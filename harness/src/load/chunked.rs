//! HTTP/1.1's chunked transfer coding (RFC 9112 §7.1), decoded in place for the load generator's own
//! connections: the data of each chunk is handed on as slices of the bytes read, never copied. Sizes,
//! extensions and trailers are bounded, so a hostile server cannot make the decoder hold more than
//! a line's worth of state.

/// The longest size line (hex digits and extensions) or trailer line taken: 4 KiB.
const MAX_LINE: usize = 4096;

/// A chunked body being decoded.
#[derive(Debug, Default)]
pub struct Chunked {
    state: State,
    /// Bytes of the current size or trailer line seen so far (for [`MAX_LINE`]).
    line: usize,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Hex digits of the next chunk's size, read so far.
    #[default]
    Size,
    /// The size read (value kept), extensions being skipped up to the line's end.
    SizeRest(u64, bool),
    /// Data of the current chunk left to hand on.
    Data(u64),
    /// The CR LF after a chunk's data (true once the CR is seen).
    DataEnd(bool),
    /// At the start of a trailer line (or of the empty line that ends the body).
    TrailerStart,
    /// Inside a trailer line, skipped to its end.
    Trailer,
    /// The empty last line's CR seen: its LF ends the body.
    LastLf,
    /// The body ended.
    Done,
}

/// Why a chunked body cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChunkError {
    /// A size that is not hex, or is too large for 64 bits.
    #[error("a chunk size that is not a hex number")]
    Size,
    /// A size or trailer line longer than 4 KiB.
    #[error("a chunk line over 4 KiB")]
    LineTooLong,
    /// A chunk's data not followed by CR LF.
    #[error("a chunk's data not ended by CR LF")]
    DataEnd,
}

impl Chunked {
    /// Whether the last chunk and the trailer have been read.
    pub fn done(&self) -> bool {
        self.state == State::Done
    }

    /// Decodes `input`, handing each run of data to `data`; returns how many bytes were used (fewer than
    /// `input.len()` only once the body has ended: the rest belongs to the next answer).
    pub fn decode(&mut self, input: &[u8], data: &mut impl FnMut(&[u8])) -> Result<usize, ChunkError> {
        let mut at = 0;
        while at < input.len() {
            match self.state {
                State::Done => return Ok(at),
                State::Data(left) => {
                    let take = (input.len() - at).min(usize::try_from(left).unwrap_or(usize::MAX));
                    data(&input[at..at + take]);
                    at += take;
                    let left = left - take as u64;
                    self.state = if left == 0 { State::DataEnd(false) } else { State::Data(left) };
                    continue;
                }
                _ => {}
            }
            let byte = input[at];
            at += 1;
            self.state = self.step(byte)?;
        }
        Ok(at)
    }

    /// One byte of a line (size, CR LF, trailer).
    fn step(&mut self, byte: u8) -> Result<State, ChunkError> {
        let in_line = matches!(self.state, State::Size | State::SizeRest(..) | State::Trailer);
        if in_line {
            self.line += 1;
            if self.line > MAX_LINE {
                return Err(ChunkError::LineTooLong);
            }
        }
        Ok(match self.state {
            State::Size => match hex(byte) {
                Some(digit) => State::SizeRest(u64::from(digit), false),
                None => return Err(ChunkError::Size),
            },
            State::SizeRest(size, past_digits) => match (hex(byte), past_digits, byte) {
                (Some(digit), false, _) => {
                    State::SizeRest(size.checked_mul(16).ok_or(ChunkError::Size)? | u64::from(digit), false)
                }
                (_, _, b'\n') => {
                    self.line = 0;
                    if size == 0 { State::TrailerStart } else { State::Data(size) }
                }
                // Whitespace, `;` extensions and the CR before LF are skipped (the size is complete).
                _ => State::SizeRest(size, true),
            },
            State::DataEnd(false) if byte == b'\r' => State::DataEnd(true),
            State::DataEnd(_) if byte == b'\n' => State::Size,
            State::DataEnd(_) => return Err(ChunkError::DataEnd),
            State::TrailerStart => match byte {
                b'\r' => State::LastLf,
                b'\n' => State::Done,
                _ => {
                    self.line = 1;
                    State::Trailer
                }
            },
            State::LastLf if byte == b'\n' => State::Done,
            State::LastLf => {
                self.line = 2;
                State::Trailer
            }
            State::Trailer if byte == b'\n' => {
                self.line = 0;
                State::TrailerStart
            }
            State::Trailer => State::Trailer,
            State::Data(_) | State::Done => unreachable!("handled by decode"),
        })
    }
}

fn hex(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes `wire` cut into pieces at `cuts`; the data, whether it ended, and the bytes left over.
    fn decode_cut(wire: &[u8], cuts: &[usize]) -> Result<(Vec<u8>, bool, usize), ChunkError> {
        let mut chunked = Chunked::default();
        let mut out = Vec::new();
        let mut bounds = vec![0];
        bounds.extend(cuts.iter().copied().filter(|&c| c > 0 && c < wire.len()));
        bounds.push(wire.len());
        let mut left = 0;
        for pair in bounds.windows(2) {
            let piece = &wire[pair[0]..pair[1]];
            let used = chunked.decode(piece, &mut |d| out.extend_from_slice(d))?;
            left += piece.len() - used;
        }
        Ok((out, chunked.done(), left))
    }

    const WIRE: &[u8] = b"5\r\nhello\r\n1;ext=\"a\"\r\n \r\nA \r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\nNEXT";

    #[test]
    fn a_body_decodes_the_same_cut_at_every_byte() {
        for cut in 0..=WIRE.len() {
            for second in cut..=WIRE.len() {
                let (data, done, left) = decode_cut(WIRE, &[cut, second]).expect("decodes");
                assert_eq!(data, b"hello 0123456789", "cut at {cut}, {second}");
                assert!(done);
                assert_eq!(left, 4, "the next answer's bytes are not used");
            }
        }
    }

    #[test]
    fn bare_lf_lines_and_an_empty_body_are_read() {
        assert_eq!(decode_cut(b"3\nabc\n0\n\n", &[]), Ok((b"abc".to_vec(), true, 0)));
        assert_eq!(decode_cut(b"0\r\n\r\n", &[]), Ok((Vec::new(), true, 0)));
        let (_, done, _) = decode_cut(b"3\r\nabc\r\n0\r\n", &[]).expect("partial");
        assert!(!done, "no end before the last empty line");
    }

    #[test]
    fn broken_bodies_are_refused() {
        assert_eq!(decode_cut(b"x\r\n", &[]), Err(ChunkError::Size));
        assert_eq!(decode_cut(b"\r\n", &[]), Err(ChunkError::Size));
        assert_eq!(decode_cut(b"3\r\nabcX\r\n", &[]), Err(ChunkError::DataEnd));
        assert_eq!(decode_cut(b"3\r\nabc\rX", &[]), Err(ChunkError::DataEnd));
        // 16 hex digits fit 64 bits; 17 do not.
        assert!(decode_cut(b"ffffffffffffffff\r\n", &[]).is_ok());
        assert_eq!(decode_cut(b"10000000000000000\r\n", &[]), Err(ChunkError::Size));
    }

    #[test]
    fn lines_are_bounded_at_4_kib() {
        let line = |n: usize| [b"1;".as_slice(), &vec![b'e'; n - 4], b"\r\n"].concat();
        assert!(decode_cut(&line(MAX_LINE), &[]).is_ok(), "a size line of exactly 4 KiB");
        assert_eq!(decode_cut(&line(MAX_LINE + 1), &[]), Err(ChunkError::LineTooLong));
        let trailer = |n: usize| [b"0\r\n".as_slice(), &vec![b't'; n - 2], b"\r\n\r\n"].concat();
        assert!(decode_cut(&trailer(MAX_LINE), &[]).expect("fits").1);
        assert_eq!(decode_cut(&trailer(MAX_LINE + 1), &[]), Err(ChunkError::LineTooLong));
    }
}
