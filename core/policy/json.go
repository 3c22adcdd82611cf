package policy

import (
	"encoding/json"
	"fmt"
	"time"
)

// Durations travel in JSON as Go duration strings ("5m0s"), not as
// nanoseconds: the snapshot is stored on the rollout and served by the API,
// where a person reads it and the browser adds healthWait to verifiedAt.

// jsonDuration is a time.Duration written as a string.
type jsonDuration time.Duration

func (d jsonDuration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *jsonDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want a string such as \"5m0s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	*d = jsonDuration(v)
	return nil
}

// snapshotJSON is Snapshot with its durations as strings. The outer fields
// shadow the embedded ones of the same JSON name.
type snapshotJSON struct {
	snapshotFields
	HealthWait         jsonDuration `json:"healthWait"`
	ApplyTimeout       jsonDuration `json:"applyTimeout"`
	OfflineGracePeriod jsonDuration `json:"offlineGracePeriod"`
}

type snapshotFields Snapshot // without the methods, so no recursion

func (s Snapshot) MarshalJSON() ([]byte, error) {
	return json.Marshal(snapshotJSON{snapshotFields(s), jsonDuration(s.HealthWait), jsonDuration(s.ApplyTimeout), jsonDuration(s.OfflineGracePeriod)})
}

func (s *Snapshot) UnmarshalJSON(b []byte) error {
	var in snapshotJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*s = Snapshot(in.snapshotFields)
	s.HealthWait, s.ApplyTimeout, s.OfflineGracePeriod = time.Duration(in.HealthWait), time.Duration(in.ApplyTimeout), time.Duration(in.OfflineGracePeriod)
	return nil
}

// specJSON is Spec with its durations as strings; unset ones are left out.
type specJSON struct {
	specFields
	HealthWait         jsonDuration `json:"healthWait,omitempty"`
	ApplyTimeout       jsonDuration `json:"applyTimeout,omitempty"`
	OfflineGracePeriod jsonDuration `json:"offlineGracePeriod,omitempty"`
}

type specFields Spec

func (s Spec) MarshalJSON() ([]byte, error) {
	return json.Marshal(specJSON{specFields(s), jsonDuration(s.HealthWait), jsonDuration(s.ApplyTimeout), jsonDuration(s.OfflineGracePeriod)})
}

func (s *Spec) UnmarshalJSON(b []byte) error {
	var in specJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*s = Spec(in.specFields)
	s.HealthWait, s.ApplyTimeout, s.OfflineGracePeriod = time.Duration(in.HealthWait), time.Duration(in.ApplyTimeout), time.Duration(in.OfflineGracePeriod)
	return nil
}

// waveJSON is Wave with its bake as a string; an unset bake is left out.
type waveJSON struct {
	waveFields
	Bake      jsonDuration `json:"bake,omitempty"`
	BatchBake jsonDuration `json:"batchBake,omitempty"`
}

type waveFields Wave

func (w Wave) MarshalJSON() ([]byte, error) {
	return json.Marshal(waveJSON{waveFields(w), jsonDuration(w.Bake), jsonDuration(w.BatchBake)})
}

func (w *Wave) UnmarshalJSON(b []byte) error {
	var in waveJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*w = Wave(in.waveFields)
	w.Bake, w.BatchBake = time.Duration(in.Bake), time.Duration(in.BatchBake)
	return nil
}
