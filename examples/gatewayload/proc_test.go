package main

import (
	"os"
	"testing"
	"time"
)

func TestParseVmRSS(t *testing.T) {
	got, err := parseVmRSS("Name:\tx\nVmPeak:\t  900 kB\nVmRSS:\t   12345 kB\nRssAnon:\t 1 kB\n")
	if err != nil || got != 12345*1024 {
		t.Fatalf("parseVmRSS = %d, %v; want %d", got, err, 12345*1024)
	}
	if _, err := parseVmRSS("Name:\tx\n"); err == nil {
		t.Fatal("no VmRSS line: want an error")
	}
}

func TestParseStatCPU(t *testing.T) {
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
	stat := "42 (gate way) (x) S 1 42 42 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 9 0 1 2 3"
	got, err := parseStatCPU(stat)
	if err != nil || got != 2*time.Second {
		t.Fatalf("parseStatCPU = %v, %v; want 2s", got, err)
	}
	if _, err := parseStatCPU("42 (x) S 1"); err == nil {
		t.Fatal("short stat: want an error")
	}
}

func TestOwnProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if rss, err := rssBytes(os.Getpid()); err != nil || rss <= 0 {
		t.Fatalf("rssBytes = %d, %v", rss, err)
	}
	if _, err := cpuTime(os.Getpid()); err != nil {
		t.Fatal(err)
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for _, tt := range []struct {
		ds   []time.Duration
		p    int
		want time.Duration
	}{
		{ds: ds, p: 95, want: 95 * time.Millisecond},
		{ds: ds, p: 50, want: 50 * time.Millisecond},
		{ds: ds, p: 100, want: 100 * time.Millisecond},
		{ds: ds[:1], p: 95, want: 100 * time.Millisecond}, // one value: it
		{ds: nil, p: 95, want: 0},                         // none: zero
	} {
		if got := percentile(tt.ds, tt.p); got != tt.want {
			t.Errorf("percentile(%d values, %d) = %v, want %v", len(tt.ds), tt.p, got, tt.want)
		}
	}
}
