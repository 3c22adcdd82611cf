package iam

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/smithy-go/encoding/cbor"
)

// deniedMessage is AWS's AccessDenied message for an identity-based
// decision.
func deniedMessage(sessionArn string, a Access, d Decision) string {
	why := "because no identity-based policy allows the " + a.Action + " action"
	if d.Reason == "ExplicitlyDenied" {
		why = "with an explicit deny in an identity-based policy"
	}
	return fmt.Sprintf("User: %s is not authorized to perform: %s on resource: %s %s", sessionArn, a.Action, a.Resource, why)
}

// writeDenied answers AccessDenied in the protocol of the request, so that
// the caller's SDK reports an AccessDeniedException (AccessDenied for the
// query protocols) with the message:
//   - JSON 1.0/1.1 (DynamoDB, Streams, Step Functions, EventBridge,
//     Secrets Manager, SQS): 400, X-Amzn-ErrorType and {"__type","Message"};
//   - REST-JSON (Lambda): 403, X-Amzn-ErrorType and {"Type","Message"};
//   - Smithy RPC v2 CBOR (CloudWatch): 403, a CBOR {"__type","message"}
//     and, as CloudWatch is query-compatible, X-Amzn-Query-Error;
//   - query (CloudWatch's form protocol): 403 and an XML ErrorResponse.
func writeDenied(w http.ResponseWriter, r *http.Request, service, message string) {
	const code = "AccessDeniedException"
	switch {
	case r.Header.Get("Smithy-Protocol") == "rpc-v2-cbor":
		w.Header().Set("Smithy-Protocol", "rpc-v2-cbor")
		w.Header().Set("Content-Type", "application/cbor")
		w.Header().Set("X-Amzn-Query-Error", "AccessDenied;Sender")
		w.WriteHeader(http.StatusForbidden)
		w.Write(cbor.Encode(cbor.Map{"__type": cbor.String("com.amazon.coral.service#" + code), "message": cbor.String(message)}))
	case strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded"):
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusForbidden)
		xml.NewEncoder(w).Encode(queryError{Type: "Sender", Code: "AccessDenied", Message: message})
	case service == "lambda":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-ErrorType", code)
		w.WriteHeader(http.StatusForbidden)
		json.NewEncoder(w).Encode(map[string]string{"Type": "User", "Message": message})
	default:
		ct := r.Header.Get("Content-Type")
		if !strings.HasPrefix(ct, "application/x-amz-json") {
			ct = "application/x-amz-json-1.0"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("X-Amzn-ErrorType", code)
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"__type": "com.amazon.coral.service#" + code, "Message": message})
	}
}

type queryError struct {
	XMLName xml.Name `xml:"ErrorResponse"`
	Type    string   `xml:"Error>Type"`
	Code    string   `xml:"Error>Code"`
	Message string   `xml:"Error>Message"`
}
