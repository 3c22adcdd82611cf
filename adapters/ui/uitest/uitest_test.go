package uitest

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A page that replaces its button and its input every 25 ms, as a
// redraw can: Click and Type land on the node that is there, every time,
// and each Click presses once. (Every 5 ms, a machine busy with the rest of
// the suite could not finish one lookup-and-press between two redraws
// within Step: the test measured the machine, not the retry.) (The press is counted, not the click event:
// at this rate the button is often replaced between the press and the
// release, which no user's page does.)
func TestClickAndType_LandOnTheNodeARedrawPutsInPlace(t *testing.T) {
	const page = `<!doctype html><main></main><script>
let clicks = 0, typed = '';
function draw() {
  const b = document.createElement('button'); b.id = 'b'; b.textContent = 'press';
  b.addEventListener('mousedown', () => { clicks++; });
  const i = document.createElement('input'); i.id = 'i'; i.value = typed;
  i.addEventListener('input', () => { typed = i.value; });
  const f = document.activeElement && document.activeElement.id === 'i';
  document.querySelector('main').replaceChildren(b, i);
  if (f) i.focus();
}
draw(); setInterval(draw, 25);
</script>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page))
	}))
	defer srv.Close()
	ctx := Browser(t)
	Do(t, ctx, chromedp.Navigate(srv.URL))
	const n = 20
	for range n {
		Click(t, ctx, "#b")
	}
	WaitFor(t, ctx, "the clicks", "clicks === 20", time.Second)
	Type(t, ctx, "#i", "abc")
	WaitFor(t, ctx, "the text", "typed === 'abc'", time.Second)
}
