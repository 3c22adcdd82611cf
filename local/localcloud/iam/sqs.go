package iam

import (
	"fmt"
	"net/url"
	"strings"
)

// sqsAccesses (the JSON protocol of aws-sdk-go-v2's sqs): the queue is
// named by QueueUrl (…/<account>/<name>), or by QueueName for GetQueueUrl.
func sqsAccesses(s Scope, op string, b jsonBody) ([]Access, error) {
	action := "sqs:" + op
	switch op {
	case "GetQueueUrl":
		if name := b.str("QueueName"); name != "" {
			return []Access{{action, s.arn("sqs", name)}}, nil
		}
		return nil, fmt.Errorf("no QueueName")
	case "SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessage", "DeleteMessageBatch",
		"ChangeMessageVisibility", "GetQueueAttributes", "PurgeQueue":
		u, err := url.Parse(b.str("QueueUrl"))
		var parts []string
		if err == nil {
			parts = strings.Split(strings.Trim(u.Path, "/"), "/")
		}
		if len(parts) != 2 {
			return nil, fmt.Errorf("QueueUrl %q is not …/<account>/<name>", b.str("QueueUrl"))
		}
		return []Access{{action, fmt.Sprintf("arn:%s:sqs:%s:%s:%s", s.Partition, s.Region, parts[0], parts[1])}}, nil
	}
	return nil, fmt.Errorf("the local cloud does not know the SQS operation %s", op)
}
