; The Windows installer of Sluice for one user: the desktop app (sluice-app.exe, the window,
; which becomes sluice-tray.exe, the tray and engine, at start; WebView2Loader.dll beside them)
; and the command-line tool sluice.exe, into %LOCALAPPDATA%\Programs\Sluice, with a Start menu
; entry, that folder on the user's PATH and an uninstaller, all without elevation. `/S`
; installs and uninstalls silently.
;
; Built on Debian by `cargo xtask windows installer` with Debian's NSIS 3.08 from the mingw
; build, and installed, run and uninstalled under Wine by `cargo xtask windows check`. Written
; by hand rather than from Tauri's template: that one needs NSIS plugins Debian does not ship.
; This script uses NSIS's own instructions and headers only, so it carries no plugin DLL.
;
; The release workflow also builds Tauri's own MSI and NSIS installers on Windows (MSVC);
; README.md says which one users get.
;
; Defines, from xtask (`makensis -D…`):
;   VERSION   the workspace version (0.1.0)
;   VERSION4  the same as four numbers, for the version resource (0.1.0.0)
;   EXE       the sluice.exe to pack
;   APP       the sluice-app.exe to pack
;   TRAY      the sluice-tray.exe to pack
;   LOADER    the WebView2Loader.dll the app links (mingw builds load it at run time)
;   ICON      the app's icon
;   OUTFILE   the installer to write
;   COMPRESSOR (optional) lzma or zlib

!ifndef VERSION | VERSION4 | EXE | APP | TRAY | LOADER | ICON | OUTFILE
  !error "define VERSION, VERSION4, EXE, APP, TRAY, LOADER, ICON and OUTFILE (cargo xtask windows installer does)"
!endif

; A 64-bit installer: Sluice is 64-bit, and so it writes the registry's 64-bit view.
Target amd64-unicode
; Same input, same bytes: solid LZMA (and zlib) is deterministic, and without `SetDateSave` the
; installer would carry the exe's modification time (the installed file gets the install's).
; COMPRESSOR: lzma unless told; xtask's unoptimized test builds (300 MB) take zlib, which packs
; them in seconds rather than minutes.
!ifndef COMPRESSOR
  !define COMPRESSOR lzma
!endif
SetCompressor /SOLID /FINAL ${COMPRESSOR}
SetDateSave off
RequestExecutionLevel user
ManifestSupportedOS all
ManifestDPIAware true

!include LogicLib.nsh
!include FileFunc.nsh
!include WinMessages.nsh

; Not "…\Uninstall\Sluice": Tauri's NSIS installer (per user) registers under the product
; name, and two installers writing one key would remove each other's entry.
!define UNINSTKEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\Sluice (mingw)"
; Where Windows keeps the WebView2 runtime's version (under SOFTWARE\WOW6432Node machine-wide,
; under Software for one user).
!define WEBVIEW2_KEY "Microsoft\EdgeUpdate\Clients\{F3017226-FE2A-4295-8BDF-00C3A9A7E4C5}"
!define ENVKEY "Environment"
; NSIS strings hold 1023 characters (Debian's build: NSIS_MAX_STRLEN=1024). A user PATH that
; long, or that would grow past it, is left as it is rather than cut.
!define MAXLEN 1023

Name "Sluice ${VERSION}"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\Sluice"
InstallDirRegKey HKCU "${UNINSTKEY}" "InstallLocation"
Icon "${ICON}"
UninstallIcon "${ICON}"
ShowInstDetails show
ShowUninstDetails show

VIProductVersion "${VERSION4}"
VIFileVersion "${VERSION4}"
VIAddVersionKey /LANG=1033 "ProductName" "Sluice"
VIAddVersionKey /LANG=1033 "ProductVersion" "${VERSION}"
VIAddVersionKey /LANG=1033 "FileVersion" "${VERSION}"
VIAddVersionKey /LANG=1033 "FileDescription" "Sluice installer"
VIAddVersionKey /LANG=1033 "CompanyName" "The Sluice authors"
VIAddVersionKey /LANG=1033 "LegalCopyright" "Copyright (C) 2026 The Sluice authors"

Page directory
Page instfiles
UninstPage uninstConfirm
UninstPage instfiles

; $R0 haystack, $R1 needle → $R2 the index of needle's first occurrence, or -1. Compares
; case-insensitively (StrCmp), as Windows compares paths.
!macro DefineFind un
  Function ${un}Find
    StrLen $R3 $R0
    StrLen $R4 $R1
    IntOp $R3 $R3 - $R4
    StrCpy $R2 0
    ${While} $R2 <= $R3
      StrCpy $R5 $R0 $R4 $R2
      ${If} $R5 == $R1
        Return
      ${EndIf}
      IntOp $R2 $R2 + 1
    ${EndWhile}
    StrCpy $R2 -1
  FunctionEnd
!macroend
!insertmacro DefineFind ""
!insertmacro DefineFind "un."

; The user's PATH as stored (unexpanded: `%USERPROFILE%` stays as written) → $0, and → $1
; "absent" (no value), "ok", or "unreadable": present but too long for NSIS's strings (or not
; a string), which ReadRegStr reports as an error with an empty result.
!macro DefineReadUserPath un
  Function ${un}ReadUserPath
    StrCpy $0 ""
    StrCpy $1 "absent"
    StrCpy $2 0
    ${Do}
      ClearErrors
      EnumRegValue $3 HKCU "${ENVKEY}" $2
      ${If} ${Errors}
      ${OrIf} $3 == ""
        Return
      ${EndIf}
      ${If} $3 == "Path"
        ${Break}
      ${EndIf}
      IntOp $2 $2 + 1
    ${Loop}
    ClearErrors
    ReadRegStr $0 HKCU "${ENVKEY}" "Path"
    StrLen $2 $0
    ; 1023 characters may be a longer value cut to fit: not safe to write back either.
    ${If} ${Errors}
    ${OrIf} $2 >= ${MAXLEN}
      StrCpy $0 ""
      StrCpy $1 "unreadable"
    ${Else}
      StrCpy $1 "ok"
    ${EndIf}
  FunctionEnd
!macroend
!insertmacro DefineReadUserPath ""
!insertmacro DefineReadUserPath "un."

; Tells running programs (Explorer, new shells) that the environment changed.
!macro BroadcastEnvironment
  SendMessage ${HWND_BROADCAST} ${WM_SETTINGCHANGE} 0 "STR:Environment" /TIMEOUT=5000
!macroend

; Appends $INSTDIR to the user's PATH unless it is there already (with or without a final
; backslash). The value is written as REG_EXPAND_SZ, Windows' own type for it, so entries
; such as `%USERPROFILE%\bin` keep working.
Function AddToPath
  Call ReadUserPath
  ${If} $1 == "unreadable"
    DetailPrint "PATH is longer than this installer can edit; add $INSTDIR to it yourself."
    MessageBox MB_OK|MB_ICONEXCLAMATION "Your PATH is too long for this installer to edit.$\r$\nAdd $INSTDIR to it yourself to run sluice from any folder." /SD IDOK
    Return
  ${EndIf}
  StrCpy $R0 ";$0;"
  StrCpy $R1 ";$INSTDIR;"
  Call Find
  ${If} $R2 == -1
    StrCpy $R1 ";$INSTDIR\;"
    Call Find
  ${EndIf}
  ${If} $R2 != -1
    DetailPrint "$INSTDIR is on PATH already."
    Return
  ${EndIf}
  ; A PATH that ends with ";" keeps its form ("A;" → "A;dir;"), so removing the entry gives
  ; back exactly what was there.
  StrCpy $2 $0 1 -1
  ${If} $0 == ""
    StrCpy $3 "$INSTDIR"
  ${ElseIf} $2 == ";"
    StrCpy $3 "$0$INSTDIR;"
  ${Else}
    StrCpy $3 "$0;$INSTDIR"
  ${EndIf}
  StrLen $4 $3
  ${If} $4 >= ${MAXLEN}
    DetailPrint "PATH would grow too long for this installer; add $INSTDIR to it yourself."
    MessageBox MB_OK|MB_ICONEXCLAMATION "Your PATH is too long for this installer to edit.$\r$\nAdd $INSTDIR to it yourself to run sluice from any folder." /SD IDOK
    Return
  ${EndIf}
  WriteRegExpandStr HKCU "${ENVKEY}" "Path" "$3"
  DetailPrint "Added $INSTDIR to PATH."
  !insertmacro BroadcastEnvironment
FunctionEnd

; Removes the first entry naming $INSTDIR from the user's PATH and nothing else: other
; entries, their order, empty ones and a final ";" stay as they are.
Function un.RemoveFromPath
  Call un.ReadUserPath
  ${If} $1 == "absent"
    Return
  ${ElseIf} $1 == "unreadable"
    DetailPrint "PATH is longer than this uninstaller can edit; remove $INSTDIR from it yourself."
    Return
  ${EndIf}
  StrCpy $R0 ";$0;"
  StrCpy $R1 ";$INSTDIR;"
  Call un.Find
  ${If} $R2 == -1
    StrCpy $R1 ";$INSTDIR\;"
    Call un.Find
  ${EndIf}
  ${If} $R2 == -1
    DetailPrint "$INSTDIR is not on PATH."
    Return
  ${EndIf}
  ; ";before" + ";" + "after;", then without the ";" added at each end.
  StrCpy $2 $R0 $R2
  StrLen $3 $R1
  IntOp $3 $R2 + $3
  StrCpy $4 $R0 "" $3
  StrCpy $5 "$2;$4" "" 1
  StrCpy $5 $5 -1
  ${If} $5 == ""
    DeleteRegValue HKCU "${ENVKEY}" "Path"
  ${Else}
    WriteRegExpandStr HKCU "${ENVKEY}" "Path" "$5"
  ${EndIf}
  DetailPrint "Removed $INSTDIR from PATH."
  !insertmacro BroadcastEnvironment
FunctionEnd

; Every program that would run from $INSTDIR: the uninstaller refuses while one runs.
!macro RefuseIfRunning NAME
  ${If} ${FileExists} "$INSTDIR\${NAME}"
    ; Windows denies writing to a running program's file; opening it to append writes nothing.
    ClearErrors
    FileOpen $0 "$INSTDIR\${NAME}" a
    ${If} ${Errors}
      MessageBox MB_OK|MB_ICONSTOP "Cannot remove $INSTDIR\${NAME}: it is running. Quit Sluice (Quit in its tray menu) and try again." /SD IDOK
      Abort "${NAME} is in use"
    ${EndIf}
    FileClose $0
  ${EndIf}
!macroend

Section "Sluice"
  SetOutPath "$INSTDIR"
  File "/oname=sluice-app.exe" "${APP}"
  File "/oname=sluice-tray.exe" "${TRAY}"
  File "/oname=WebView2Loader.dll" "${LOADER}"
  File "/oname=sluice.exe" "${EXE}"
  WriteUninstaller "$INSTDIR\uninstall.exe"
  CreateShortCut "$SMPROGRAMS\Sluice.lnk" "$INSTDIR\sluice-app.exe" "" "$INSTDIR\sluice-app.exe" 0

  WriteRegStr HKCU "${UNINSTKEY}" "DisplayName" "Sluice"
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTKEY}" "Publisher" "The Sluice authors"
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayIcon" "$INSTDIR\sluice-app.exe"
  WriteRegStr HKCU "${UNINSTKEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTKEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegStr HKCU "${UNINSTKEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINSTKEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTKEY}" "NoRepair" 1
  ${GetSize} "$INSTDIR" "/S=0K" $0 $1 $2
  WriteRegDWORD HKCU "${UNINSTKEY}" "EstimatedSize" $0

  Call AddToPath

  ; The window needs Microsoft's WebView2 runtime, which Windows 11 ships and Windows 10 gets
  ; through updates. Without it the tray, the engine and sluice.exe work; the window does not.
  ReadRegStr $0 HKLM "SOFTWARE\WOW6432Node\${WEBVIEW2_KEY}" "pv"
  ${If} $0 == ""
    ReadRegStr $0 HKCU "Software\${WEBVIEW2_KEY}" "pv"
  ${EndIf}
  ${If} $0 == ""
  ${OrIf} $0 == "0.0.0.0"
    DetailPrint "The WebView2 runtime is not installed: Sluice's window needs it."
    MessageBox MB_OK|MB_ICONINFORMATION "Sluice's window needs Microsoft's WebView2 runtime, which this computer lacks.$\r$\nInstall the Evergreen runtime from Microsoft (developer.microsoft.com/microsoft-edge/webview2); the tray and sluice.exe work without it." /SD IDOK
  ${EndIf}
SectionEnd

; What the user made with Sluice (projects, tokens, the audit log, under %APPDATA%) is theirs
; and stays. Only what the installer wrote goes; the folder only if nothing else is in it.
Section "Uninstall"
  ; A running program cannot be deleted: stop before changing anything, and say which.
  !insertmacro RefuseIfRunning "sluice-tray.exe"
  !insertmacro RefuseIfRunning "sluice-app.exe"
  !insertmacro RefuseIfRunning "sluice.exe"
  Delete "$SMPROGRAMS\Sluice.lnk"
  Delete "$INSTDIR\sluice-app.exe"
  Delete "$INSTDIR\sluice-tray.exe"
  Delete "$INSTDIR\WebView2Loader.dll"
  Delete "$INSTDIR\sluice.exe"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
  Call un.RemoveFromPath
  DeleteRegKey HKCU "${UNINSTKEY}"
SectionEnd
