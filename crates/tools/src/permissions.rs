//! The permission engine: modes, rules, settings sources, the decision order, persistence.
