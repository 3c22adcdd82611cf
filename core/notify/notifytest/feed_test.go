package notifytest

import "testing"

func TestFeed_Contract(t *testing.T) { Contract(t, Memory()) }
