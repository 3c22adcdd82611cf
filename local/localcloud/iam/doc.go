// Package iam holds every AWS call of the local cloud to the calling
// role's policies, as the synthesized template writes them.
//
// The pieces, in the order a call meets them:
//   - Policies: each role's identity policies (inline, AWS managed,
//     AWS::IAM::Policy attachments) and each function's resource policy
//     (AWS::Lambda::Permission), read from a resolved *cfn.Template.
//   - Proxy: an http.Handler every process reaches through
//     AWS_ENDPOINT_URL. It reads the role from the SigV4 access key id (the
//     role's logical id, by the local cloud's convention) and the service
//     from the signing scope, derives the (action, resource) pairs AWS would
//     authorize, asks the Evaluator, and answers AccessDenied in the
//     service's protocol or passes the request to that service's backend.
//   - Evaluator: the npm package @cloud-copilot/iam-simulate in a
//     long-lived node process (sidecar/evaluate.js), with decisions cached.
//   - Recorder and Unused: the (role, action, resource) list a run used,
//     and the grants no call used (least privilege both ways).
package iam
