//! The edits later stages make to a type's model: the user's configuration (cargo-covcon's
//! selection), what the harness could build (the oracle's drivable model) and a mutant's
//! regrouped pairs. They go through these methods, the model's one editor outside the
//! analysis, so that a member taken out of the tests always says why and no pair keeps a
//! method no test can call.

use crate::model::{Approximation, Pair, ParamKind, Reason, TypeModel};

impl TypeModel {
    /// Takes the whole type out of the tests, for `reason`, or the reason it already has, or
    /// a generic one (the harness could not drive it and said no more).
    pub fn untest(&mut self, reason: Option<Reason>) {
        self.reason = reason
            .or(self.reason.take())
            .or(Some(Reason::unexplained()));
    }

    /// Takes the method named `name` out of the tests, for `reason`, and the pairs it is in.
    pub fn untest_method(&mut self, name: &str, reason: Reason) {
        for method in self.methods.iter_mut().filter(|m| m.name == name) {
            method.reason = Some(reason.clone());
        }
        self.pairs.retain(|p| !p.methods.iter().any(|m| m == name));
    }

    /// Puts the method named `name` back in the tests with `generic_args` as its turbofish
    /// (a configured instantiation of a method whose only problem was its generics).
    pub fn test_method_with(&mut self, name: &str, generic_args: Vec<String>) {
        if let Some(method) = self.methods.iter_mut().find(|m| m.name == name) {
            method.generic_args = generic_args;
            method.reason = None;
        }
    }

    /// Takes the constructor named `name` out of the tests, for `reason`.
    pub fn untest_constructor(&mut self, name: &str, reason: Reason) {
        for c in self.constructors.iter_mut().filter(|c| c.name == name) {
            c.reason = Some(reason.clone());
        }
    }

    /// Takes constructor `name` of the value type at `path` out of the tests, for `reason`.
    pub fn untest_value_constructor(&mut self, path: &str, name: &str, reason: Reason) {
        let values = self.values.iter_mut().filter(|v| v.path == path);
        for c in values.flat_map(|v| &mut v.constructors) {
            if c.name == name {
                c.reason = Some(reason.clone());
            }
        }
    }

    /// Keeps only the pairs both of whose methods `callable` says a test can call.
    pub fn retain_pairs(&mut self, callable: impl Fn(&str) -> bool) {
        self.pairs
            .retain(|p| callable(&p.methods[0]) && callable(&p.methods[1]));
    }

    /// Keeps only the guard scopes of the methods `keep` names (by the method handing the
    /// guard out).
    pub fn retain_scopes(&mut self, keep: impl Fn(&str) -> bool) {
        self.scopes.retain(|scope| keep(&scope.from));
    }

    /// Replaces each method parameter's kind that `replace` gives a new one for.
    pub fn replace_param_kinds(&mut self, replace: impl Fn(&ParamKind) -> Option<ParamKind>) {
        for p in self.methods.iter_mut().flat_map(|m| &mut m.params) {
            if let Some(kind) = replace(&p.kind) {
                p.kind = kind;
            }
        }
    }

    /// Sets what each method's answer is taken as (`None`: exact), in method order.
    pub fn set_answers(&mut self, answers: Vec<Option<Approximation>>) {
        for (m, answer) in self.methods.iter_mut().zip(answers) {
            m.approximate = answer;
        }
    }

    /// Each pair in the group `regrouped` puts it in, when it has one there (a mutant's code
    /// analysed again): how many pairs changed group.
    pub fn regroup(&mut self, regrouped: &[Pair]) -> usize {
        let mut changed = 0;
        for pair in &mut self.pairs {
            let again = regrouped.iter().find(|p| p.methods == pair.methods);
            if let Some(again) = again.filter(|p| p.group != pair.group) {
                pair.group = again.group;
                pair.reasons = again.reasons.clone();
                changed += 1;
            }
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{Group, Method, Pair, Reason, TypeModel};

    fn method(name: &str) -> Method {
        Method {
            name: name.into(),
            ..Method::default()
        }
    }

    fn pair(a: &str, b: &str) -> Pair {
        Pair {
            methods: [a.into(), b.into()],
            group: Group::High,
            reasons: vec![],
        }
    }

    #[test]
    fn a_method_taken_out_says_why_and_takes_its_pairs_along() {
        let mut t = TypeModel {
            methods: vec![method("get"), method("put")],
            pairs: vec![pair("get", "put"), pair("get", "get"), pair("put", "put")],
            ..TypeModel::default()
        };
        t.untest_method("put", Reason::Configured);
        t.untest_method("nope", Reason::Configured);
        assert_eq!(t.methods[1].reason, Some(Reason::Configured));
        assert!(!t.methods[1].supported());
        assert_eq!(t.pairs, [pair("get", "get")]);
        t.test_method_with("put", vec!["u32".into()]);
        assert!(t.methods[1].supported() && t.methods[1].reason.is_none());
        assert_eq!(t.reason, None);
        t.untest(None);
        assert_eq!(t.reason, Some(Reason::unexplained()));
        t.untest(Some(Reason::NoConstructor));
        t.untest(None);
        assert_eq!(t.reason, Some(Reason::NoConstructor));
    }
}
