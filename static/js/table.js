/* The table page sends moves over its WebSocket only while the socket is open.

   The htmx ws extension queues a message sent before its socket opens and keeps it for good if the
   socket closes without reconnecting, so a move made right after the page loads, or while the
   connection is down, could vanish without a word. Instead the move form waits: its button is
   disabled and a status line says why until htmx:wsOpen, and again from a close until the socket
   reconnects. Whatever was typed stays in the field. Without JavaScript none of this runs and the
   form is a plain POST. */
(function () {
  var open = false;

  function update() {
    document.querySelectorAll('.move-form button').forEach(function (button) {
      button.disabled = !open;
    });
    var status = document.getElementById('socket-status');
    if (status) {
      status.hidden = open;
    }
  }

  document.addEventListener('htmx:wsConnecting', function () { open = false; update(); });
  document.addEventListener('htmx:wsOpen', function () { open = true; update(); });
  document.addEventListener('htmx:wsClose', function () { open = false; update(); });
  document.addEventListener('htmx:wsAfterMessage', update);  // a new board brings a new form
  document.addEventListener('htmx:wsConfigSend', function (event) {
    if (open) {
      return;
    }
    event.preventDefault();  // not into the extension's queue
    if (event.detail.triggeringEvent) {
      event.detail.triggeringEvent.preventDefault();  // and not as a page POST either
    }
  });
})();
