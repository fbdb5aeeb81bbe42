package collector

import (
	"io"
	"net/http"
	"strconv"
)

// NotFound answers a path nothing serves as Antenna does (its Falcon
// application's default error serializer): 404, a JSON body with the
// status line as title, "Vary: Accept".
func NotFound(w http.ResponseWriter, r *http.Request) {
	jsonError(w, http.StatusNotFound)
}

// submitMethods answers /submit for methods other than POST as Antenna's
// Falcon does: OPTIONS 200 with "Allow: POST" and no body, any other method
// 405 with "Allow: POST, OPTIONS" and the JSON error.
func submitMethods(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodOptions {
		w.Header().Set("Allow", http.MethodPost)
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Allow", "POST, OPTIONS")
	jsonError(w, http.StatusMethodNotAllowed)
}

// jsonError writes Falcon's JSON error for a status: {"title": "404 Not Found"}.
func jsonError(w http.ResponseWriter, status int) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Add("Vary", "Accept")
	w.WriteHeader(status)
	io.WriteString(w, `{"title": "`+strconv.Itoa(status)+" "+http.StatusText(status)+`"}`)
}
