package windows

import "testing"

// BenchmarkOpen is the engine's case: the quickstart policy's windows (agent
// zone on weekdays, UTC at the weekend), asked for one target at an instant
// that misses every window, so that no window short-circuits the loop.
func BenchmarkOpen(b *testing.B) {
	ws := []Window{
		win(weekdays, "22:00", "05:00", ""),
		win(weekend, "00:00", "00:00", "UTC"),
	}
	agent := zone("Europe/Berlin")
	now := at("2025-06-04T10:00:00Z") // Wednesday noon in Berlin
	if Open(ws, agent, now) {
		b.Fatal("the benchmark instant must be outside every window")
	}
	b.ReportAllocs()
	for b.Loop() {
		Open(ws, agent, now)
	}
}

// BenchmarkNextOpen: the Wait state's deadline, computed once per wave.
func BenchmarkNextOpen(b *testing.B) {
	ws := []Window{win(weekdays, "22:00", "05:00", ""), win(weekend, "00:00", "00:00", "UTC")}
	agent := zone("Europe/Berlin")
	now := at("2025-06-04T10:00:00Z")
	b.ReportAllocs()
	for b.Loop() {
		NextOpen(ws, agent, now)
	}
}
