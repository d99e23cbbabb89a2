//! cargo-fuzz target `eventstream_raw`: see [`streamwire_fuzz::eventstream_raw`] for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| streamwire_fuzz::eventstream_raw(data));
