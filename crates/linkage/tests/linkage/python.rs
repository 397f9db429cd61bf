//! Finding torch through a Python interpreter, without importing it.

use launchguard_linkage::{inspect, Backend, InspectOptions, LinkageError, Target};

use crate::common::{have, Fixture, Search};

#[test]
fn python_finds_torch_without_importing_it() {
    if !have("cc") || !have("python3") {
        return;
    }
    let f = Fixture::new();
    f.lib("site/torch/lib/librocprofiler-sdk.so.1", None, &[], Search::None, false);
    f.lib(
        "site/torch/lib/libtorch_cpu.so",
        None,
        &["site/torch/lib/librocprofiler-sdk.so.1"],
        Search::Rpath("$ORIGIN"),
        false,
    );
    // Importing this torch would leave a marker file behind.
    let marker = f.path("imported");
    std::fs::write(
        f.path("site/torch/__init__.py"),
        format!("open({:?}, 'w').write('imported')\n", marker.to_str().unwrap()),
    )
    .unwrap();
    // The interpreter is a wrapper that puts the fake site-packages first.
    let python = f.path("python");
    std::fs::write(
        &python,
        format!("#!/bin/sh\nPYTHONPATH={} exec python3 \"$@\"\n", f.path("site").display()),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&python).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&python, perms).unwrap();

    let opts = InspectOptions { root: None, ld_library_path: Some(String::new()), ..Default::default() };
    let target = Target::Python(python.to_str().unwrap().to_string());
    let r = inspect(&target, &opts).unwrap();
    assert!(!marker.exists(), "torch was imported");
    assert_eq!(r.torch_dir.as_deref(), Some(f.path("site/torch").to_str().unwrap()));
    assert_eq!(r.inspected, [f.path("site/torch/lib/libtorch_cpu.so").to_str().unwrap()]);
    assert_eq!(r.profiler_backend, Backend::RocprofilerSdk);

    // An interpreter that does not exist, and one without torch.
    let e = inspect(&Target::Python(f.path("nope").to_str().unwrap().into()), &opts).unwrap_err();
    assert!(matches!(e, LinkageError::Python { .. }));
    std::fs::write(&python, "#!/bin/sh\nexec python3 -I \"$@\"\n").unwrap();
    std::fs::remove_dir_all(f.path("site/torch")).unwrap();
    if let Err(e) = inspect(&target, &opts) {
        assert!(!e.to_string().contains('\n'));
    }
}
