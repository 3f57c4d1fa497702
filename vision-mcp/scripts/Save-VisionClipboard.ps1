<#
.SYNOPSIS
    Saves the picture on the Windows clipboard (e.g. from Win+Shift+S) as a PNG in the vision-mcp
    image share, and prints the file name to give Strata.

.DESCRIPTION
    Reads the clipboard picture, writes it as a new PNG file into -Share (never over an existing
    file), and prints the name, e.g. clip-20261130-174512-123.png. It sends nothing anywhere but the
    share, and leaves the clipboard as it was. The picture reaches OpenAI only when analyze_image is
    called with that name.

    For Windows PowerShell 5.1, which needs a single-threaded apartment for the clipboard:
        powershell.exe -STA -File .\scripts\Save-VisionClipboard.ps1 -Share '\\192.168.1.20\vision-images'
    Follow your organisation's script execution policy (for one run, as an example:
    powershell.exe -STA -ExecutionPolicy Bypass -File ...).

.PARAMETER Share
    The image share (or a folder in it), e.g. '\\192.168.1.20\vision-images' or
    '\\192.168.1.20\vision-images\screenshots'.

.PARAMETER Prefix
    The start of the file name (letters, digits, '-' and '_'; default 'clip').
#>
[CmdletBinding()]
param(
    [Parameter(Mandatory = $true)]
    [string] $Share,

    [ValidatePattern('^[A-Za-z0-9_-]{1,40}$')]
    [string] $Prefix = 'clip'
)

Set-StrictMode -Version 2.0
$ErrorActionPreference = 'Stop'

if ([System.Threading.Thread]::CurrentThread.GetApartmentState() -ne [System.Threading.ApartmentState]::STA) {
    [Console]::Error.WriteLine('Save-VisionClipboard: run it with powershell.exe -STA (the clipboard needs it).')
    exit 2
}
if (-not (Test-Path -LiteralPath $Share -PathType Container)) {
    [Console]::Error.WriteLine("Save-VisionClipboard: the share '$Share' cannot be reached or is not a folder.")
    exit 2
}

Add-Type -AssemblyName System.Windows.Forms
Add-Type -AssemblyName System.Drawing

if (-not [System.Windows.Forms.Clipboard]::ContainsImage()) {
    [Console]::Error.WriteLine('Save-VisionClipboard: there is no picture on the clipboard (Win+Shift+S copies one).')
    exit 1
}
$picture = [System.Windows.Forms.Clipboard]::GetImage()
if ($null -eq $picture) {
    [Console]::Error.WriteLine('Save-VisionClipboard: the clipboard picture could not be read.')
    exit 1
}

$name = '{0}-{1}.png' -f $Prefix, (Get-Date -Format 'yyyyMMdd-HHmmss-fff')
$path = Join-Path -Path $Share -ChildPath $name
$stream = $null
try {
    # CreateNew: never replaces a file that is already there.
    $stream = New-Object System.IO.FileStream($path, [System.IO.FileMode]::CreateNew, [System.IO.FileAccess]::Write)
    $picture.Save($stream, [System.Drawing.Imaging.ImageFormat]::Png)
}
catch {
    [Console]::Error.WriteLine("Save-VisionClipboard: could not write $name to the share: $($_.Exception.Message)")
    exit 1
}
finally {
    if ($null -ne $stream) { $stream.Dispose() }
    $picture.Dispose()
}

# The name to give analyze_image (in a subfolder of the share, prefix it: screenshots/<name>).
Write-Output $name
Write-Host "Saved. Ask Strata: use vision-mcp's analyze_image with image=""$name"" and your question." -ForegroundColor DarkGray
