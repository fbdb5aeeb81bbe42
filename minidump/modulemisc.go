package minidump

// MiscUnicode returns the raw unicode byte of the module's misc debug
// record (MDImageDebugMisc.unicode, which ImageDebugMisc reduces to a
// bool), or 0 when the record is absent or too short.
func (m *Module) MiscUnicode() uint8 {
	if len(m.Misc) < miscMinSize {
		return 0
	}
	return m.Misc[8]
}
