package sfnlocal

import (
	"encoding/json"
	"strconv"
)

func jsonInt(n int) json.Number { return json.Number(strconv.Itoa(n)) }
