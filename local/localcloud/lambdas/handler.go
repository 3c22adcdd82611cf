package lambdas

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
)

// Handler serves Lambda's Invoke REST API, so that the AWS SDK's Lambda
// client (BaseEndpoint or AWS_ENDPOINT_URL at this handler) works
// unchanged: POST /2015-03-31/functions/{name or ARN}/invocations with
// X-Amz-Invocation-Type RequestResponse (default), Event or DryRun.
// Answers are the service's: 200 with the payload (and
// X-Amz-Function-Error: Unhandled when the function failed), 202 for
// Event, 204 for DryRun, and the errors with the service's status and
// exception name (X-Amzn-ErrorType), which the SDK decodes.
func (r *Runtime) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /2015-03-31/functions/{function}/invocations", r.serveInvoke)
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		writeError(w, http.StatusNotFound, "UnknownOperationException", "Unknown operation "+req.Method+" "+req.URL.Path, "")
	})
	return mux
}

func (r *Runtime) serveInvoke(w http.ResponseWriter, req *http.Request) {
	name := req.PathValue("function")
	if q := req.URL.Query().Get("Qualifier"); q != "" && q != "$LATEST" {
		writeError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+name+":"+q, "")
		return
	}
	kind := req.Header.Get("X-Amz-Invocation-Type")
	// One byte over the largest limit is enough to know it is exceeded.
	payload, err := io.ReadAll(io.LimitReader(req.Body, syncPayloadLimit+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "InvalidRequestContentException", err.Error(), "")
		return
	}
	switch kind {
	case "", "RequestResponse":
		res, err := r.Invoke(req.Context(), name, payload)
		if err != nil {
			writeInvokeError(w, err)
			return
		}
		writeResult(w, res)
	case "Event":
		if err := r.InvokeAsync(name, payload); err != nil {
			writeInvokeError(w, err)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	case "DryRun":
		if _, err := r.lookup(name); err != nil {
			writeInvokeError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		writeError(w, http.StatusBadRequest, "InvalidParameterValueException", "Invalid X-Amz-Invocation-Type: "+kind, "")
	}
}

func writeResult(w http.ResponseWriter, res Result) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Amz-Executed-Version", "$LATEST")
	h.Set("X-Amzn-RequestId", res.RequestID)
	if res.FunctionError != "" {
		h.Set("X-Amz-Function-Error", res.FunctionError)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(res.Payload)
}

// writeInvokeError answers an error of Invoke as the service does.
func writeInvokeError(w http.ResponseWriter, err error) {
	var (
		throttled *ThrottledError
		notFound  *NotFoundError
		tooLarge  *PayloadTooLargeError
	)
	switch {
	case errors.As(err, &throttled):
		writeError(w, http.StatusTooManyRequests, "TooManyRequestsException", "Rate Exceeded.", throttled.Reason)
	case errors.As(err, &notFound):
		writeError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+notFound.Function, "")
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, "RequestTooLargeException", tooLarge.message(), "")
	case errors.Is(err, context.Canceled):
		// The caller is gone: nobody reads the answer.
		w.WriteHeader(499)
	default:
		writeError(w, http.StatusInternalServerError, "ServiceException", err.Error(), "")
	}
}

// writeError writes a restjson error: the exception's name in
// X-Amzn-ErrorType, its members in the body.
func writeError(w http.ResponseWriter, status int, code, message, reason string) {
	body := map[string]string{"Type": "User", "message": message}
	if status >= 500 {
		body["Type"] = "Service"
	}
	if reason != "" {
		body["Reason"] = reason
	}
	b, _ := json.Marshal(body)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Amzn-ErrorType", code)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
