//! Coverage by construction: covering arrays of strength 2 (every value of each axis beside every value
//! of every other axis in at least one row), built greedily and deterministically, so a generated case
//! meets every pair of its axes' values on every run, whatever the seed and budget; random draws come
//! after them ([`super::covering_first`]).

use std::collections::BTreeSet;

/// A pair of axis values: (axis, value, later axis, value).
type Pair = (usize, usize, usize, usize);

/// Every pair a covering array of axes with these many values each must hold.
fn every_pair(levels: &[usize]) -> BTreeSet<Pair> {
    let mut pairs = BTreeSet::new();
    for (i, &a_count) in levels.iter().enumerate() {
        for (j, &b_count) in levels.iter().enumerate().skip(i + 1) {
            for a in 0..a_count {
                for b in 0..b_count {
                    pairs.insert((i, a, j, b));
                }
            }
        }
    }
    pairs
}

/// The pairs `row` holds.
fn pairs_of(row: &[usize]) -> impl Iterator<Item = Pair> + '_ {
    row.iter().enumerate().flat_map(move |(i, &a)| row.iter().enumerate().skip(i + 1).map(move |(j, &b)| (i, a, j, b)))
}

/// Rows of value indices (`row[axis] < levels[axis]`) holding every pair of values of any two axes.
/// Each row starts from the first pair not yet held, and every other axis, in order, takes the value that
/// holds the most pairs not yet held with the axes already set (the smallest on a tie). Not minimal
/// (trying other starting pairs gave no fewer rows here), but deterministic and near the bound.
pub fn pairwise(levels: &[usize]) -> Vec<Vec<usize>> {
    let mut missing = every_pair(levels);
    let mut rows = Vec::new();
    if levels.contains(&0) {
        return rows;
    }
    if levels.len() == 1 {
        return (0..levels[0]).map(|v| vec![v]).collect();
    }
    while let Some(&seed) = missing.iter().next() {
        let best = candidate(levels, &missing, seed);
        for pair in pairs_of(&best) {
            missing.remove(&pair);
        }
        rows.push(best);
    }
    rows
}

/// A row holding `seed`, each other axis given greedily (see [`pairwise`]).
fn candidate(levels: &[usize], missing: &BTreeSet<Pair>, (i, a, j, b): Pair) -> Vec<usize> {
    let mut row: Vec<Option<usize>> = vec![None; levels.len()];
    row[i] = Some(a);
    row[j] = Some(b);
    for axis in 0..levels.len() {
        if row[axis].is_some() {
            continue;
        }
        let gain = |value: usize| {
            row.iter()
                .enumerate()
                .filter_map(|(other, set)| set.map(|v| (other, v)))
                .filter(|&(other, v)| {
                    let pair = if other < axis { (other, v, axis, value) } else { (axis, value, other, v) };
                    missing.contains(&pair)
                })
                .count()
        };
        row[axis] = Some((0..levels[axis]).max_by_key(|&v| (gain(v), std::cmp::Reverse(v))).unwrap_or(0));
    }
    row.into_iter().map(|v| v.unwrap_or(0)).collect()
}

/// The pairs of values no row of `rows` holds (empty: `rows` cover every pair of `levels`).
pub fn pairs_missing(levels: &[usize], rows: &[Vec<usize>]) -> Vec<Pair> {
    let mut missing = every_pair(levels);
    for row in rows {
        for pair in pairs_of(row) {
            missing.remove(&pair);
        }
    }
    missing.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rows_hold_every_pair_of_any_axes() {
        for levels in [vec![2, 2], vec![3, 3, 3], vec![4, 2, 4, 3, 2, 4, 3, 2], vec![5, 1, 2], vec![2; 12]] {
            let rows = pairwise(&levels);
            assert!(pairs_missing(&levels, &rows).is_empty(), "{levels:?}: {rows:?}");
            for row in &rows {
                assert!(row.iter().zip(&levels).all(|(v, n)| v < n), "{row:?} outside {levels:?}");
            }
        }
    }

    #[test]
    fn the_rows_are_few() {
        // The two largest axes' product is the least any covering array can have; greedy stays near it.
        let levels = [4, 4, 4, 3, 3, 2, 2, 2, 2];
        let rows = pairwise(&levels);
        assert!((16..=26).contains(&rows.len()), "{} rows", rows.len());
        assert_eq!(pairwise(&[2, 2]).len(), 4);
    }

    #[test]
    fn a_missing_pair_is_named() {
        let levels = [2, 2];
        let missing = pairs_missing(&levels, &[vec![0, 0], vec![1, 1], vec![0, 1]]);
        assert_eq!(missing, vec![(0, 1, 1, 0)]);
    }

    #[test]
    fn the_same_levels_give_the_same_rows() {
        assert_eq!(pairwise(&[3, 4, 2, 2]), pairwise(&[3, 4, 2, 2]));
    }
}
