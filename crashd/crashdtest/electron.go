package crashdtest

import "sort"

// Electron is a crash as Electron's crashReporter sends it (Electron ≥ 16
// uploads through Crashpad on every platform): crashReporter.start's
// options become Crashpad annotations, the fields Electron's
// docs/api/crash-reporter.md ("Crash Report Payload") lists: ver (the
// Electron version), platform, process_type, guid, _version (the app's
// version), _productName, prod ("Electron"), _companyName, and every
// property of extra / globalExtra. compress (default true) is Crashpad's
// gzip; Crashpad adds product=Electron&version=...&guid=... to the URL.
type Electron struct {
	// SubmitURL is crashReporter.start's submitURL.
	SubmitURL string
	// ProductName, CompanyName are the options of the same names;
	// AppVersion is app.getVersion() (package.json's version).
	ProductName, CompanyName, AppVersion string
	// ElectronVersion is process.versions.electron ("30.0.1" when empty).
	ElectronVersion string
	// Platform is process.platform ("linux" when empty).
	Platform string
	// ProcessType is "browser", "renderer", "gpu-process", ... ("browser"
	// when empty).
	ProcessType string
	// Extra are the extra and globalExtra fields.
	Extra map[string]string
	// GUID is the Crashpad client id; random when empty.
	GUID string
	// NoCompress is compress: false.
	NoCompress bool
	// Minidump is the dump.
	Minidump []byte
}

// Crashpad returns the Crashpad upload Electron's handler makes.
func (e Electron) Crashpad() *Crashpad {
	def := func(s, d string) string {
		if s == "" {
			return d
		}
		return s
	}
	if e.GUID == "" {
		e.GUID = NewUUID()
	}
	a := map[string]string{}
	for k, v := range e.Extra {
		a[k] = v
	}
	for k, v := range map[string]string{
		"_productName": e.ProductName,
		"_companyName": e.CompanyName,
		"_version":     e.AppVersion,
		"prod":         "Electron",
		"ver":          def(e.ElectronVersion, "30.0.1"),
		"platform":     def(e.Platform, "linux"),
		"process_type": def(e.ProcessType, "browser"),
		"guid":         e.GUID,
	} {
		a[k] = v
	}
	return &Crashpad{URL: e.SubmitURL, Annotations: a, Minidump: e.Minidump, NoGzip: e.NoCompress}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
