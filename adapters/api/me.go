package api

import "net/http"

// meView is the schema Me.
type meView struct {
	Actor       string       `json:"actor"`
	DisplayName string       `json:"displayName"`
	Role        Role         `json:"role"`
	Permissions []Permission `json:"permissions"`
}

func (s *server) getMe(_ http.ResponseWriter, r *http.Request, p Principal) (int, any, error) {
	if _, pr := newQuery(r); pr != nil {
		return 0, nil, pr
	}
	return http.StatusOK, meView{Actor: p.Actor, DisplayName: p.DisplayName, Role: p.Role, Permissions: p.Role.Permissions()}, nil
}
