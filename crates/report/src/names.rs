//! Kernel names for display: demangled (`_Z…` names, as ROCm's composable kernels come), without
//! `void`, the argument list, the namespaces and the template arguments, cut to a length a table
//! cell holds. The full name stays in the JSON and CSV, and in each table cell's tooltip.

/// Longest display name, in characters.
pub const MAX_CHARS: usize = 64;

/// The display form of a kernel name: `void at::native::(anonymous namespace)::
/// vectorized_layer_norm_kernel<c10::Half, float, false>(int, …)` → `vectorized_layer_norm_kernel<…>`.
pub fn short(name: &str) -> String {
    crate::escape::one_line(&short_raw(name)).into_owned()
}

fn short_raw(name: &str) -> String {
    let demangled;
    let mut s = name.trim();
    if s.starts_with("_Z") {
        let options = cpp_demangle::DemangleOptions::default();
        if let Some(text) = cpp_demangle::Symbol::new(s).ok().and_then(|sym| sym.demangle(&options).ok()) {
            demangled = text;
            s = demangled.as_str();
        }
    }
    let s = s.strip_prefix("void ").unwrap_or(s).trim();
    let s = strip_arguments(s);
    let s = last_component(s);
    let collapsed = collapse_templates(s);
    if collapsed.is_empty() {
        return cut(name.trim());
    }
    cut(&collapsed)
}

/// Display names for several full names: [`short`], with `·2`, `·3` added where two names would
/// read the same, so that no two rows of a table look alike.
pub fn distinct(names: &[&str]) -> Vec<String> {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    names
        .iter()
        .map(|n| {
            let s = short(n);
            let k = seen.entry(s.clone()).or_insert(0);
            *k += 1;
            if *k == 1 {
                s
            } else {
                format!("{s}·{k}")
            }
        })
        .collect()
}

/// Without a final `(…)` argument list (and a `const` after it).
fn strip_arguments(s: &str) -> &str {
    let t = s.strip_suffix(" const").unwrap_or(s).trim_end();
    if !t.ends_with(')') {
        return s;
    }
    let mut depth = 0i32;
    for (i, c) in t.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    let head = &t[..i];
                    // `(anonymous namespace)` alone is not an argument list, nor words in
                    // parentheses after a space ("Memcpy HtoD (Pageable -> Device)").
                    let spaced = head.ends_with(char::is_whitespace);
                    return if head.is_empty() || head.ends_with("::") || spaced { s } else { head };
                }
            }
            _ => {}
        }
    }
    s
}

/// The last `::` component outside any `<…>` or `(…)`.
fn last_component(s: &str) -> &str {
    let (mut angle, mut paren) = (0i32, 0i32);
    let mut start = 0;
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'<' => angle += 1,
            b'>' => angle -= 1,
            b'(' => paren += 1,
            b')' => paren -= 1,
            b':' if angle == 0 && paren == 0 && bytes.get(i + 1) == Some(&b':') => {
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    &s[start..]
}

/// Every outermost `<…>` as `<…>`.
fn collapse_templates(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '<' => {
                if depth == 0 {
                    out.push_str("<…>");
                }
                depth += 1;
            }
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out.trim().to_string()
}

fn cut(s: &str) -> String {
    if s.chars().count() <= MAX_CHARS {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX_CHARS - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_kernel_names_read_short() {
        for (name, want) in [
            // H200, the reference workload.
            ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half, float, false>(int, float, c10::Half const*, c10::Half const*, c10::Half const*, float*, float*, c10::Half*)", "vectorized_layer_norm_kernel<…>"),
            ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::half_t> >, false, false, false, false, false, true, false, false>(pytorch_flash::Flash_fwd_params)", "flash_fwd_kernel<…>"),
            ("nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_TNT", "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_TNT"),
            ("ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "ncclDevKernel_AllReduce_Sum_f16_RING_LL"),
            // A lambda's parentheses inside the template arguments.
            ("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1})", "elementwise_kernel<…>"),
            ("Memcpy HtoD (Pageable -> Device)", "Memcpy HtoD (Pageable -> Device)"),
            // Mangled (ROCm composable kernel): demangled first.
            ("_ZN7ck_tile6kentryILi1ENS_4testEEEvv", "kentry<…>"),
        ] {
            assert_eq!(short(name), want, "{name}");
        }
        let long = "k".repeat(100);
        assert_eq!(short(&long).chars().count(), MAX_CHARS);
        assert!(short(&long).ends_with('…'));
    }

    #[test]
    fn names_that_read_alike_are_told_apart() {
        let names = ["void a::f<int>(int)", "void b::f<float>(float)", "g"];
        assert_eq!(distinct(&names), ["f<…>", "f<…>·2", "g"]);
    }
}
