//! The Windows clipboard script, read as text: no PowerShell runs here (none is packaged for this
//! machine's registries), so the properties that can be read from the source are checked, and README
//! gives the one-line parse check to run on Windows.

const SCRIPT: &str = include_str!("../scripts/Save-VisionClipboard.ps1");

#[test]
fn the_clipboard_script_is_plain_ascii_for_windows_powershell_5_1() {
    // Windows PowerShell 5.1 reads a file without a byte-order mark as the ANSI code page.
    assert!(SCRIPT.is_ascii());
    let (mut braces, mut parens) = (0i32, 0i32);
    for c in SCRIPT.chars() {
        match c {
            '{' => braces += 1,
            '}' => braces -= 1,
            '(' => parens += 1,
            ')' => parens -= 1,
            _ => {}
        }
        assert!(braces >= 0 && parens >= 0);
    }
    assert_eq!((braces, parens), (0, 0));
}

#[test]
fn the_clipboard_script_takes_the_share_needs_sta_and_never_overwrites() {
    assert!(SCRIPT.contains("[Parameter(Mandatory = $true)]\n    [string] $Share"));
    assert!(SCRIPT.contains("GetApartmentState() -ne [System.Threading.ApartmentState]::STA"));
    assert!(SCRIPT.contains("[System.IO.FileMode]::CreateNew"));
    assert!(SCRIPT.contains("[System.Drawing.Imaging.ImageFormat]::Png"));
    assert!(SCRIPT.contains("Write-Output $name"));
}

#[test]
fn the_clipboard_script_sends_nothing_and_leaves_the_clipboard_alone() {
    // The code without its comments (the help block `<# … #>` and `#` lines).
    let mut code = SCRIPT.to_ascii_lowercase();
    while let (Some(start), Some(end)) = (code.find("<#"), code.find("#>")) {
        code.replace_range(start..end + 2, "");
    }
    let code: String = code.lines().filter(|l| !l.trim_start().starts_with('#')).collect::<Vec<_>>().join("\n");
    assert!(code.contains("getimage()"), "the comments were stripped, not the code");
    for forbidden in [
        "invoke-webrequest",
        "invoke-restmethod",
        "net.webclient",
        "httpclient",
        "start-bitstransfer",
        "openai",
        "set-clipboard",
        "clipboard]::set",
        "clipboard]::clear",
    ] {
        assert!(!code.contains(forbidden), "{forbidden}");
    }
}
