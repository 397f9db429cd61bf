//! The judge's rules at their limits, on figures written by hand: one test binary, so that a
//! mutant (scripts/mutants.sh) links it once.

mod compare;
mod ranks;
mod run;
mod settings;
mod trace;
