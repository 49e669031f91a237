; Inno Setup 6 script: wraps the PyInstaller onedir (dist\jobctrl\) into one setup .exe
; with Start-menu and desktop shortcuts and an uninstaller that keeps the user's data
; unless asked.
;
;   python packaging\build.py                       (runs ISCC itself when it is installed)
;   ISCC /DAppVersion=0.1.0 packaging\windows\jobctrl.iss   (by hand, after the freeze)
;
; Per-user install by default (no admin prompt; {autopf} is %LOCALAPPDATA%\Programs),
; all-users on request. The app dir, %LOCALAPPDATA%\JobCtrl (platformdirs), is never
; inside {app}: an upgrade installs over {app} and never touches the data.

#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#ifndef DistDir
  #define DistDir "..\..\dist"
#endif
#define AppName "JobCtrl"
#define AppExe "jobctrl.exe"

[Setup]
; A fixed AppId: every version upgrades the same installation (never change it).
AppId={{6F1C4B52-3E0A-4C8B-9A77-2B1D5E0F7C31}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher={#AppName}
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
OutputDir={#DistDir}
OutputBaseFilename={#AppName}-{#AppVersion}-windows-x64-setup
SetupIconFile=..\..\build\icons\jobctrl.ico
UninstallDisplayIcon={app}\{#AppExe}
UninstallDisplayName={#AppName}
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
; Restart Manager closes a running JobCtrl (and its worker, API and Temporal children,
; which run from {app}) before files are replaced.
CloseApplications=yes
RestartApplications=no

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"

[InstallDelete]
; The bundle's library folder is replaced whole on upgrade: no stale modules from an
; older version next to the new ones.
Type: filesandordirs; Name: "{app}\_internal"

[Files]
Source: "{#DistDir}\jobctrl\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"; Parameters: "desktop"; WorkingDir: "{app}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Parameters: "desktop"; WorkingDir: "{app}"; Tasks: desktopicon

[Run]
Filename: "{app}\{#AppExe}"; Parameters: "desktop"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[Code]
{ The user's data: jobs, the Temporal history, settings, logs, generated PDFs. }
function UserDataDir(): String;
begin
  Result := ExpandConstant('{localappdata}\{#AppName}');
end;

procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
begin
  if (CurUninstallStep = usPostUninstall) and DirExists(UserDataDir()) then
  begin
    { Keep the data unless the user asks; a silent uninstall always keeps it. }
    if (not UninstallSilent()) and
       (MsgBox('Also delete your JobCtrl data (jobs, history, settings and documents) in '
               + UserDataDir() + '?' + #13#10#13#10 + 'Choose No to keep it for a later install.',
               mbConfirmation, MB_YESNO or MB_DEFBUTTON2) = IDYES) then
      DelTree(UserDataDir(), True, True, True);
  end;
end;
