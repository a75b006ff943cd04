//! Coverage state of one type: the set P of method pairs, and per pair its BC-ConTest group,
//! tried count R(p) and covered count C(p) (CovCon section IV-B).
//!
//! R(p) counts the tests built to try p; C(p) counts the tests in which p ran concurrently
//! (a pair seen several times in one run counts once), so that |R(p) − C(p)| compares like with
//! like.

use analysis::{Group, Method, Pair};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One pair of P with its counts, as the reports show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairCoverage {
    /// Method names, the first not after the second in declaration order.
    pub methods: [String; 2],
    /// The analysis's group; `low` when the model has no entry for the pair.
    pub group: Group,
    /// R(p): tests built to try the pair.
    pub tried: u64,
    /// C(p): tests in which the pair ran concurrently, indirect calls included.
    pub covered: u64,
}

/// P, R and C for one type. Pairs are indexed in declaration order: (0,0), (0,1), …, (1,1), ….
#[derive(Debug, Clone)]
pub(crate) struct Coverage {
    pub(crate) pairs: Vec<PairCoverage>,
    /// For each pair, the indices of its two methods in the generator's method list.
    pub(crate) members: Vec<[usize; 2]>,
    /// Name-sorted method names to pair index, for the oracle's name-sorted pairs.
    index: HashMap<(String, String), usize>,
}

impl Coverage {
    /// Every unordered pair of `methods`, self-pairs included, grouped as `model_pairs` says.
    pub(crate) fn new(methods: &[Method], model_pairs: &[Pair]) -> Coverage {
        let groups: HashMap<(String, String), Group> = model_pairs
            .iter()
            .map(|p| (sorted(&p.methods[0], &p.methods[1]), p.group))
            .collect();
        let mut coverage = Coverage {
            pairs: Vec::new(),
            members: Vec::new(),
            index: HashMap::new(),
        };
        for (i, first) in methods.iter().enumerate() {
            for (j, second) in methods.iter().enumerate().skip(i) {
                let key = sorted(&first.name, &second.name);
                coverage.index.insert(key.clone(), coverage.pairs.len());
                coverage.pairs.push(PairCoverage {
                    methods: [first.name.clone(), second.name.clone()],
                    group: groups.get(&key).copied().unwrap_or(Group::Low),
                    tried: 0,
                    covered: 0,
                });
                coverage.members.push([i, j]);
            }
        }
        coverage
    }

    /// The index of the pair of methods `i` and `j` (in either order).
    pub(crate) fn pair_of(&self, i: usize, j: usize) -> usize {
        let (i, j) = (i.min(j), i.max(j));
        self.members
            .iter()
            .position(|m| *m == [i, j])
            .expect("every method pair is in P")
    }

    /// Adds one to C(p) for every distinct pair of P in `covered`; other pairs are ignored.
    pub(crate) fn record(&mut self, covered: &[[String; 2]]) {
        let mut hit: Vec<usize> = covered
            .iter()
            .filter_map(|[a, b]| self.index.get(&sorted(a, b)).copied())
            .collect();
        hit.sort_unstable();
        hit.dedup();
        for i in hit {
            self.pairs[i].covered += 1;
        }
    }

    /// Pairs that can be covered at all: those the analysis did not remove.
    pub(crate) fn worth_covering(&self) -> usize {
        self.pairs
            .iter()
            .filter(|p| p.group != Group::Removed)
            .count()
    }

    /// Non-removed pairs covered at least once.
    pub(crate) fn covered_worth(&self) -> usize {
        self.pairs
            .iter()
            .filter(|p| p.group != Group::Removed && p.covered > 0)
            .count()
    }

    /// Whether every non-removed pair has been covered at least `times` times.
    pub(crate) fn goal_reached(&self, times: u32) -> bool {
        self.pairs
            .iter()
            .filter(|p| p.group != Group::Removed)
            .all(|p| p.covered >= u64::from(times))
    }
}

fn sorted(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn method(name: &str) -> Method {
        Method {
            name: name.to_string(),
            ..Method::default()
        }
    }

    /// Builds P for methods `names` with the given model pairs, records `runs`, and compares
    /// `a,b group tried covered` lines with `expect`.
    fn check(
        names: &[&str],
        model: &[(&str, &str, Group)],
        runs: &[&[(&str, &str)]],
        expect: &str,
    ) {
        let methods: Vec<Method> = names.iter().map(|n| method(n)).collect();
        let model: Vec<Pair> = model
            .iter()
            .map(|(a, b, g)| Pair {
                methods: [a.to_string(), b.to_string()],
                group: *g,
                reasons: vec![],
            })
            .collect();
        let mut coverage = Coverage::new(&methods, &model);
        for run in runs {
            let covered: Vec<[String; 2]> = run
                .iter()
                .map(|(a, b)| [a.to_string(), b.to_string()])
                .collect();
            coverage.record(&covered);
        }
        let got: Vec<String> = coverage
            .pairs
            .iter()
            .map(|p| {
                format!(
                    "{},{} {:?} {} {}",
                    p.methods[0], p.methods[1], p.group, p.tried, p.covered
                )
            })
            .collect();
        assert_eq!(got.join("\n"), expect.trim());
    }

    #[test]
    fn p_holds_every_unordered_pair_with_self_pairs_in_declaration_order() {
        check(
            &["put", "get", "len"],
            &[("get", "put", Group::High), ("len", "len", Group::Removed)],
            &[],
            "
put,put Low 0 0
put,get High 0 0
put,len Low 0 0
get,get Low 0 0
get,len Low 0 0
len,len Removed 0 0",
        );
    }

    #[test]
    fn a_pair_seen_twice_in_one_run_is_covered_once_and_unknown_pairs_are_ignored() {
        check(
            &["put", "get"],
            &[],
            &[
                &[("get", "put"), ("get", "put"), ("get", "helper")],
                &[("get", "get")],
            ],
            "
put,put Low 0 0
put,get Low 0 1
get,get Low 0 1",
        );
    }
}
