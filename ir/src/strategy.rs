//! Proptest strategies (to come).
