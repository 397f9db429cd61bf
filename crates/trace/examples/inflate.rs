//! The floor of gzip input: decompression alone, with the inflaters available to Rust, for
//! `bench/run.sh` (`cargo build --release -p launchguard-trace --example inflate`).
//!
//!     inflate zlib-rs FILE.gz      # streamed, 1 MiB blocks, as the reader decompresses
//!     inflate libdeflate FILE.gz   # whole file in memory, one call (libdeflate has no streaming)
//!     inflate deflate FILE.gz      # streamed as zlib-rs, the first member's CRC-32 left out: what
//!                                  # the reader's decompressing thread does on 8 threads or more
//!
//! Prints the decompressed bytes.

use std::io::Read;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(how), Some(path)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: inflate zlib-rs|libdeflate|deflate FILE.gz");
        std::process::exit(2);
    };
    let bytes = match how.as_str() {
        "zlib-rs" => {
            let file = std::fs::File::open(path).expect("a readable file");
            drain(flate2::read::MultiGzDecoder::new(std::io::BufReader::with_capacity(1 << 16, file)))
        }
        "deflate" => {
            let file = std::fs::File::open(path).expect("a readable file");
            drain(launchguard_trace::gzip_first_crc_unchecked(std::io::BufReader::with_capacity(
                1 << 16,
                file,
            )))
        }
        "libdeflate" => {
            let gz = std::fs::read(path).expect("a readable file");
            // The trailer's size, modulo 2^32: grown until it fits.
            let isize = u32::from_le_bytes(gz[gz.len() - 4..].try_into().expect("a gzip trailer")) as usize;
            let mut out = vec![0u8; isize.max(gz.len() * 4)];
            let mut d = libdeflater::Decompressor::new();
            loop {
                match d.gzip_decompress(&gz, &mut out) {
                    Ok(n) => break n as u64,
                    Err(libdeflater::DecompressionError::InsufficientSpace) => {
                        out = vec![0u8; out.len() * 2 + (1 << 32)]
                    }
                    Err(e) => panic!("{e:?}"),
                }
            }
        }
        _ => {
            eprintln!("usage: inflate zlib-rs|libdeflate|deflate FILE.gz");
            std::process::exit(2);
        }
    };
    println!("{bytes}");
}

/// Reads `r` to its end in blocks of 1 MiB, as the reader does: the bytes read.
fn drain(mut r: impl Read) -> u64 {
    let mut block = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        match r.read(&mut block).expect("valid gzip") {
            0 => break total,
            n => total += n as u64,
        }
    }
}
