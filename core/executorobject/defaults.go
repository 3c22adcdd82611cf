package executorobject

// Defaults of an AWX object.
const (
	DefaultAWXLimit      = "{host}"
	DefaultHostAttribute = "host.name"
)

// WithDefaults returns the object with every unset field of its webhook or
// AWX block at its default. Parse applies it, so a stored object and a
// rollout's snapshot of it state what their calls do.
func (o Object) WithDefaults() Object {
	if o.Webhook != nil {
		w := o.Webhook.WithDefaults()
		o.Webhook = &w
	}
	if o.AWX != nil {
		a := o.AWX.WithDefaults()
		o.AWX = &a
	}
	return o
}

// WithDefaults fills method (POST), timeout (10s), retryFor (2m) and, when
// cancels are sent, cancelUrl (the url).
func (w Webhook) WithDefaults() Webhook {
	w.Method = or(w.Method, DefaultMethod)
	w.Timeout = or(w.Timeout, DefaultTimeout)
	w.RetryFor = or(w.RetryFor, DefaultRetryFor)
	if w.Cancel {
		w.CancelURL = or(w.CancelURL, w.URL)
	}
	return w
}

// WithDefaults fills limit ({host}), hostAttribute (host.name), timeout
// (10s) and retryFor (2m).
func (a AWX) WithDefaults() AWX {
	a.Limit = or(a.Limit, DefaultAWXLimit)
	a.HostAttribute = or(a.HostAttribute, DefaultHostAttribute)
	a.Timeout = or(a.Timeout, DefaultTimeout)
	a.RetryFor = or(a.RetryFor, DefaultRetryFor)
	return a
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
