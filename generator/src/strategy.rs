//! Which method pair to test next: the four strategies and their prioritisation scores.
//!
//! - `random`: ConTeGe (Pradel and Gross, PLDI 2012): random methods in each suffix, no
//!   coverage feedback.
//! - `naive`: the pair tried least, ties at random (CovCon section VI-E's ablation).
//! - `covcon`: CovCon (Choudhary, Lu and Pradel, ICSE 2017) Definition 2 with the P_prio
//!   cache of section IV-E.
//! - `bc`: BC-ConTest (Bo et al., IEEE Access 2019) section II-D: the analysis's high group
//!   first, then the low group, removed pairs never, scored by S(p) = max(|r−c|,1)·r. Once
//!   every pair was tried, the high group keeps [`HIGH_SHARE`] of every `HIGH_SHARE + 1` tries
//!   (a measured departure, docs/generator.md "Departures of `bc`, and why").

use crate::coverage::PairCoverage;
use analysis::Group;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// After `bc`'s first pass, the high group gets this many tries for each try of the low
/// group (read literally, the paper ranks both groups by one score from then on).
pub(crate) const HIGH_SHARE: u64 = 3;

/// How the generator picks the method pair of the next tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Random methods in each suffix, as ConTeGe does.
    Random,
    /// The pair tried least, ties at random.
    Naive,
    /// CovCon's prioritisation score (Definition 2) with the P_prio cache.
    CovCon,
    /// BC-ConTest: the analysis's groups, then S(p) = max(|r−c|,1)·r.
    #[default]
    Bc,
}

impl Strategy {
    /// Every strategy, in the order the CLI lists them.
    pub const ALL: [Strategy; 4] = [
        Strategy::Random,
        Strategy::Naive,
        Strategy::CovCon,
        Strategy::Bc,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Random => "random",
            Strategy::Naive => "naive",
            Strategy::CovCon => "covcon",
            Strategy::Bc => "bc",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Strategy {
    type Err = String;

    fn from_str(s: &str) -> Result<Strategy, String> {
        Strategy::ALL
            .into_iter()
            .find(|strategy| strategy.name() == s)
            .ok_or_else(|| format!("unknown strategy `{s}` (expected random, naive, covcon or bc)"))
    }
}

/// CovCon's prioritisation score (Definition 2): 0 when the pair was never tried, else
/// max(|r−c|,1)·max(r,1). Lower scores are tested first.
pub fn covcon_score(tried: u64, covered: u64) -> u64 {
    if tried == 0 {
        0
    } else {
        tried.abs_diff(covered).max(1).saturating_mul(tried)
    }
}

/// BC-ConTest's score (formula 6): max(|r−c|,1)·r where r starts at 1, i.e. r = tried + 1.
pub fn bc_score(tried: u64, covered: u64) -> u64 {
    let r = tried + 1;
    r.abs_diff(covered).max(1).saturating_mul(r)
}

/// The selection state of one type for the coverage-guided strategies.
#[derive(Debug, Clone)]
pub(crate) enum Selector {
    Naive,
    /// `prio` is P_prio: the pairs that had the lowest score when it was last computed.
    CovCon {
        prio: Vec<usize>,
    },
    Bc,
}

impl Selector {
    /// The selector for a strategy; `None` for `random`, which selects no pair.
    pub(crate) fn new(strategy: Strategy) -> Option<Selector> {
        match strategy {
            Strategy::Random => None,
            Strategy::Naive => Some(Selector::Naive),
            Strategy::CovCon => Some(Selector::CovCon { prio: Vec::new() }),
            Strategy::Bc => Some(Selector::Bc),
        }
    }

    /// The index of the next pair to try, or `None` when no pair may be tried.
    pub(crate) fn select(&mut self, pairs: &[PairCoverage], rng: &mut impl Rng) -> Option<usize> {
        match self {
            Selector::Naive => {
                let all: Vec<usize> = (0..pairs.len()).collect();
                pick_lowest(&all, |i| pairs[i].tried, rng)
            }
            Selector::CovCon { prio } => {
                if prio.is_empty() {
                    let all: Vec<usize> = (0..pairs.len()).collect();
                    *prio = lowest(&all, |i| covcon_score(pairs[i].tried, pairs[i].covered));
                }
                if prio.is_empty() {
                    return None;
                }
                Some(prio.swap_remove(rng.gen_range(0..prio.len())))
            }
            Selector::Bc => {
                let candidates = bc_candidates(pairs);
                // Ties go to the high group, then are broken at random.
                pick_lowest(
                    &candidates,
                    |i| (bc_score(pairs[i].tried, pairs[i].covered), pairs[i].group),
                    rng,
                )
            }
        }
    }
}

/// BC-ConTest's phases: untried high pairs, then untried low pairs; then, once every pair was
/// tried, the high group while it has had fewer than [`HIGH_SHARE`] times the low group's
/// tries, else the low group (either group alone when the other is empty).
fn bc_candidates(pairs: &[PairCoverage]) -> Vec<usize> {
    let with = |group: Group, untried: bool| -> Vec<usize> {
        (0..pairs.len())
            .filter(|&i| pairs[i].group == group && (!untried || pairs[i].tried == 0))
            .collect()
    };
    for group in [Group::High, Group::Low] {
        let untried = with(group, true);
        if !untried.is_empty() {
            return untried;
        }
    }
    let tries = |group: Group| -> u64 {
        pairs
            .iter()
            .filter(|p| p.group == group)
            .map(|p| p.tried)
            .sum()
    };
    let (high, low) = (with(Group::High, false), with(Group::Low, false));
    if low.is_empty()
        || (!high.is_empty() && tries(Group::High) < HIGH_SHARE.saturating_mul(tries(Group::Low)))
    {
        high
    } else {
        low
    }
}

/// The candidates with the lowest key, in order.
fn lowest<K: Ord>(candidates: &[usize], key: impl Fn(usize) -> K) -> Vec<usize> {
    let Some(min) = candidates.iter().map(|&i| key(i)).min() else {
        return Vec::new();
    };
    candidates
        .iter()
        .copied()
        .filter(|&i| key(i) == min)
        .collect()
}

/// One of the candidates with the lowest key, at random.
fn pick_lowest<K: Ord>(
    candidates: &[usize],
    key: impl Fn(usize) -> K,
    rng: &mut impl Rng,
) -> Option<usize> {
    let best = lowest(candidates, key);
    if best.is_empty() {
        None
    } else {
        Some(best[rng.gen_range(0..best.len())])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    /// Table I of the CovCon paper: rows are R(p) = 0..=10, columns C(p) = 0..=10.
    const TABLE_I: &str = "
0 0 0 0 0 0 0 0 0 0 0
1 1 1 2 3 4 5 6 7 8 9
4 2 2 2 4 6 8 10 12 14 16
9 6 3 3 3 6 9 12 15 18 21
16 12 8 4 4 4 8 12 16 20 24
25 20 15 10 5 5 5 10 15 20 25
36 30 24 18 12 6 6 6 12 18 24
49 42 35 28 21 14 7 7 7 14 21
64 56 48 40 32 24 16 8 8 8 16
81 72 63 54 45 36 27 18 9 9 9
100 90 80 70 60 50 40 30 20 10 10";

    /// Renders `score` over tried and covered counts 0..=10 as Table I lays it out.
    fn check(score: fn(u64, u64) -> u64, expect: &str) {
        let rows: Vec<String> = (0..=10)
            .map(|r| {
                (0..=10)
                    .map(|c| score(r, c).to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        assert_eq!(rows.join("\n"), expect.trim());
    }

    fn pair(a: &str, b: &str, group: Group, tried: u64, covered: u64) -> PairCoverage {
        PairCoverage {
            methods: [a.to_string(), b.to_string()],
            group,
            tried,
            covered,
        }
    }

    fn names(pairs: &[PairCoverage], picked: &[usize]) -> Vec<String> {
        let mut names: Vec<String> = picked
            .iter()
            .map(|&i| format!("({},{})", pairs[i].methods[0], pairs[i].methods[1]))
            .collect();
        names.sort();
        names
    }

    #[test]
    fn covcon_score_reproduces_table_one_of_the_paper() {
        check(covcon_score, TABLE_I);
    }

    #[test]
    fn bc_score_is_the_covcon_table_shifted_by_one_try() {
        // r starts at 1, so an untried pair scores like a pair CovCon tried once.
        for tried in 0..10 {
            for covered in 0..=10 {
                assert_eq!(
                    bc_score(tried, covered),
                    covcon_score(tried + 1, covered),
                    "r {tried} c {covered}"
                );
            }
        }
    }

    #[test]
    fn covcon_fig_one_walk_through_focuses_on_m2_m3_m3_m3_and_m3_m4() {
        // Fig. 1d after 20 tests: every pair tried twice. The figure's covered counts are not
        // in the text; these follow its description: (m1,m1) and (m1,m2) are never covered
        // (same lock), (m2,m4) and other pairs with the helper m4 often.
        let pairs = vec![
            pair("m1", "m1", Group::Low, 2, 0),
            pair("m1", "m2", Group::Low, 2, 0),
            pair("m1", "m3", Group::Low, 2, 4),
            pair("m1", "m4", Group::Low, 2, 5),
            pair("m2", "m2", Group::Low, 2, 0),
            pair("m2", "m3", Group::Low, 2, 2),
            pair("m2", "m4", Group::Low, 2, 8),
            pair("m3", "m3", Group::Low, 2, 1),
            pair("m3", "m4", Group::Low, 2, 3),
            pair("m4", "m4", Group::Low, 2, 6),
        ];
        let mut selector = Selector::new(Strategy::CovCon).unwrap();
        let mut rng = StdRng::seed_from_u64(1);
        let picked: Vec<usize> = (0..3)
            .map(|_| selector.select(&pairs, &mut rng).unwrap())
            .collect();
        assert_eq!(names(&pairs, &picked), ["(m2,m3)", "(m3,m3)", "(m3,m4)"]);
    }

    #[test]
    fn covcon_uses_the_cached_p_prio_until_it_is_empty() {
        let mut pairs = vec![
            pair("a", "a", Group::Low, 0, 0),
            pair("a", "b", Group::Low, 0, 0),
        ];
        let mut selector = Selector::new(Strategy::CovCon).unwrap();
        let mut rng = StdRng::seed_from_u64(1);
        let first = selector.select(&pairs, &mut rng).unwrap();
        // However bad the other pair looks now, it is still in P_prio and comes next.
        let other = 1 - first;
        pairs[other].tried = 100;
        assert_eq!(selector.select(&pairs, &mut rng), Some(other));
        // P_prio is empty now: recomputed, it holds only the pair with the lower score.
        pairs[first].tried = 1;
        pairs[first].covered = 1;
        assert_eq!(selector.select(&pairs, &mut rng), Some(first));
    }

    #[test]
    fn naive_picks_the_pair_tried_least() {
        let pairs = vec![
            pair("a", "a", Group::Removed, 3, 0),
            pair("a", "b", Group::Low, 1, 0),
            pair("b", "b", Group::Low, 2, 9),
        ];
        let mut selector = Selector::new(Strategy::Naive).unwrap();
        let mut rng = StdRng::seed_from_u64(1);
        assert_eq!(selector.select(&pairs, &mut rng), Some(1));
    }

    #[test]
    fn bc_tries_high_pairs_then_low_pairs_and_never_removed_ones() {
        let mut pairs = vec![
            pair("a", "a", Group::Removed, 0, 0),
            pair("a", "b", Group::Low, 0, 0),
            pair("a", "c", Group::High, 0, 0),
            pair("b", "b", Group::Low, 0, 0),
            pair("b", "c", Group::High, 0, 0),
            pair("c", "c", Group::Low, 0, 0),
        ];
        let mut selector = Selector::new(Strategy::Bc).unwrap();
        let mut rng = StdRng::seed_from_u64(3);
        let mut order = Vec::new();
        for _ in 0..12 {
            let i = selector.select(&pairs, &mut rng).unwrap();
            pairs[i].tried += 1;
            pairs[i].covered += 1;
            order.push(i);
        }
        assert_eq!(names(&pairs, &order[..2]), ["(a,c)", "(b,c)"]);
        assert_eq!(names(&pairs, &order[2..5]), ["(a,b)", "(b,b)", "(c,c)"]);
        assert!(!order.contains(&0));
    }

    #[test]
    fn bc_turns_away_from_pairs_that_never_run_concurrently() {
        // Within one group: between groups the high share decides (next test).
        let pairs = vec![
            pair("a", "a", Group::High, 4, 0),
            pair("a", "b", Group::High, 4, 4),
        ];
        let mut selector = Selector::new(Strategy::Bc).unwrap();
        let mut rng = StdRng::seed_from_u64(1);
        assert_eq!(selector.select(&pairs, &mut rng), Some(1));
    }

    #[test]
    fn after_the_first_pass_bc_gives_the_high_group_three_tries_for_each_low_one() {
        let mut pairs = vec![
            pair("a", "a", Group::Removed, 0, 0),
            pair("a", "b", Group::High, 0, 0),
            pair("b", "b", Group::Low, 0, 0),
            pair("b", "c", Group::Low, 0, 0),
            pair("c", "c", Group::High, 0, 0),
        ];
        let mut selector = Selector::new(Strategy::Bc).unwrap();
        let mut rng = StdRng::seed_from_u64(5);
        let mut groups = String::new();
        for _ in 0..20 {
            let i = selector.select(&pairs, &mut rng).unwrap();
            pairs[i].tried += 1;
            pairs[i].covered += 1;
            groups.push(if pairs[i].group == Group::High {
                'H'
            } else {
                'L'
            });
        }
        // The first pass: both high pairs, then both low ones; then three high for one low.
        assert_eq!(groups, "HHLLHHHHLHHHLHHHLHHH");
        assert_eq!(pairs[0].tried, 0);
    }

    #[test]
    fn bc_selects_nothing_when_every_pair_is_removed() {
        let pairs = vec![pair("a", "a", Group::Removed, 0, 0)];
        let mut selector = Selector::new(Strategy::Bc).unwrap();
        assert_eq!(selector.select(&pairs, &mut StdRng::seed_from_u64(1)), None);
    }

    #[test]
    fn strategies_parse_from_and_print_as_their_cli_names() {
        for strategy in Strategy::ALL {
            assert_eq!(strategy.to_string().parse::<Strategy>(), Ok(strategy));
        }
        assert_eq!(Strategy::default(), Strategy::Bc);
        assert!("fast".parse::<Strategy>().is_err());
        assert_eq!(
            serde_json::to_string(&Strategy::CovCon).unwrap(),
            "\"covcon\""
        );
    }
}
