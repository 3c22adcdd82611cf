// Package page is the one shape of a paged listing, shared by the stores
// (adapters/store and its in-memory stand-in), the API's wire and the client:
// the items of one page and the opaque token that asks for the next.
//
// A token means something only to the listing that issued it; any other is
// ErrBadToken, which the API answers with a 400. A page may hold fewer
// items than asked for, even none, while Next is set (a filter dropped
// some): only an empty Next ends a listing.
package page

import "errors"

// Page is one page of a listing. Next is empty on the last page; otherwise
// it is the opaque token that asks for the following one. The JSON tags are
// the API's wire shape of every list.
type Page[T any] struct {
	Items []T    `json:"items"`
	Next  string `json:"nextPageToken,omitempty"`
}

// ErrBadToken is wrapped by every error about a page token that its
// listing did not issue.
var ErrBadToken = errors.New("invalid page token")
