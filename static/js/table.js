/* The table page sends moves over its WebSocket only while the socket is open.

   The htmx ws extension would queue a message sent before its socket opens, invisibly, and keep
   it for good if the socket closes without reconnecting. Here a move made while the socket is
   not open (right after the page loads, or while the connection is down) is held by this script
   instead: the form keeps what was typed, a status line says the move will be sent, and it is
   sent when htmx:wsOpen reports the socket open (after a reconnect too). Submitting again while
   it waits holds the same form once; nothing is sent twice.
   Without JavaScript none of this runs and the form is a plain POST. */
(function () {
  // After the connection drops (a server restart, a network blip) the page tries again soon: a
  // short wait with jitter, capped at a few seconds (0.5-1 s, then 1-2 s, then 2-4 s each time),
  // not the ws extension's default, which doubles up to 64 s. The jitter spreads a whole study's
  // pages over the first seconds after a restart; the server counts the time a socket it lost
  // was away as its own outage, not the person's (studyapp/tables/outages.py).
  // This script is deferred after htmx and its ws extension (templates/tables/table.html), so
  // both are there to configure; an attempt that has not opened within CONNECT_MS (a network
  // that swallows packets rather than refusing them) is given up and tried again on the same
  // schedule, instead of waiting minutes for the browser's own timeout.
  var CONNECT_MS = 5000;
  function reconnectDelay(retryCount) {
    var cap = Math.min(4000, 1000 * Math.pow(2, Math.max(0, retryCount)));
    return cap / 2 + Math.random() * cap / 2;
  }
  function createWebSocket(url) {
    var socket = new WebSocket(url, []);
    socket.binaryType = window.htmx.config.wsBinaryType || 'blob';
    setTimeout(function () {
      if (socket.readyState === WebSocket.CONNECTING) {
        socket.close();  // closes with 1006, which the extension retries
      }
    }, CONNECT_MS);
    return socket;
  }
  function install() {
    if (window.htmx) {
      window.htmx.config.wsReconnectDelay = reconnectDelay;
      window.htmx.createWebSocket = createWebSocket;
    }
  }
  install();
  document.addEventListener('DOMContentLoaded', install);  // in case htmx came later still
  var open = false;
  var held = null;  // the move form submitted while the socket was not open
  var closed = '';  // why the server closed the socket for good, when it said so
  var lastSent = null;  // the move form last sent over the open socket
  var resends = 0;  // times it was sent again because the server said it was not saved
  // Close codes the socket does not reconnect after (the server's consumers name them).
  var REASONS = {
    4413: 'That message was too large for the table, so the connection was closed. '
      + 'Reload the page to go on.',
    4404: 'There is no table at this address.',
    4409: 'This seat is now open in another browser or tab, so this page stopped sending moves. '
      + 'Go on in the other one.'
  };

  function update() {
    var status = document.getElementById('socket-status');
    if (status && closed) {
      status.hidden = false;
      status.textContent = closed;
    } else if (status) {
      status.hidden = open;
      // The page's language: the template puts both texts on the element.
      status.textContent = held
        ? (status.dataset.held || 'Connecting to the table… your move will be sent as soon as the connection is open.')
        : (status.dataset.waiting || 'Connecting to the table… you can move as soon as the connection is open.');
    }
  }

  document.addEventListener('htmx:wsConnecting', function () { open = false; update(); });
  document.addEventListener('htmx:wsClose', function (event) {
    var close = event.detail && event.detail.event;
    open = false;
    closed = (close && REASONS[close.code]) || '';
    update();
  });
  // A notice the server sent into the status line (the table could not be reached for a
  // moment) gives way to the next board.
  document.addEventListener('htmx:wsAfterMessage', function (event) {
    var message = String(event.detail.message);
    if (open && message.indexOf('id="socket-status"') < 0) {
      update();
      resends = 0;  // a board came: the table is answering again
    }
    // The server could not save the last move (the database was away for a moment): the form
    // still holds it; send it again after a pause, a few times at most. The server judges it
    // against the table as it is then, so a move that did land is not recorded twice.
    if (message.indexOf('data-resend="1"') >= 0 && lastSent && resends < 3) {
      var form = lastSent;
      resends += 1;
      setTimeout(function () {
        if (document.body.contains(form)) {
          if (open) { form.requestSubmit(); } else { held = form; update(); }
        }
      }, 2000 * resends);
    }
  });
  document.addEventListener('htmx:wsOpen', function () {
    open = true;
    closed = '';
    update();
    var form = held;
    held = null;
    if (form && document.body.contains(form)) {
      form.requestSubmit();  // the server judges it against the table as it is now
    }
  });
  // Presence: one heartbeat every data-every seconds while the socket is open (a heartbeat
  // while it is not would only be dropped: the server counts the next connect as presence).
  document.addEventListener('DOMContentLoaded', function () {
    var form = document.getElementById('heartbeat');
    var seconds = form ? parseFloat(form.dataset.every) : 0;
    if (seconds > 0) {
      setInterval(function () {
        if (open && document.body.contains(form)) {
          form.requestSubmit();
        }
      }, seconds * 1000);
    }
  });
  document.addEventListener('htmx:wsConfigSend', function (event) {
    if (open) {
      if (event.detail.elt && event.detail.elt.classList.contains('move-form')) {
        lastSent = event.detail.elt;
      }
      return;
    }
    event.preventDefault();  // not into the extension's queue
    if (event.detail.triggeringEvent) {
      event.detail.triggeringEvent.preventDefault();  // and not as a page POST either
    }
    if (event.detail.elt && event.detail.elt.classList.contains('move-form')) {
      held = event.detail.elt;
      update();
    }
  });
})();

/* The Guess control: its input may only hold one of the candidate words of its datalist (any
   case). Anything else is marked invalid with a message saying so, and the browser does not send
   the form; the server refuses such a guess too, with the same reason, for clients without this
   script. */
(function () {
  function check(input) {
    var list = document.getElementById(input.getAttribute('list'));
    var typed = input.value.trim().toLowerCase();
    var known = !typed || Array.prototype.some.call(list ? list.options : [], function (option) {
      return option.value.toLowerCase() === typed;
    });
    var message = input.dataset.notCandidate
      || 'WORD is not one of the COUNT candidate words; pick a word from the list.';
    input.setCustomValidity(known ? '' : message.replace('WORD', '"' + input.value.trim() + '"')
      .replace('COUNT', list ? list.options.length : ''));
  }

  document.addEventListener('input', function (event) {
    if (event.target.matches && event.target.matches('.guess-form input[list]')) {
      check(event.target);
    }
  });
})();

/* The live region: a screen reader hears the newest move only. The board is replaced whole on
   every push, so it is not itself a live region (that would read the whole board out each time,
   and heartbeats resend it unchanged); after each push whose seq is new, the one-line announcer
   beside it gets the game's result if the game is over, else the newest line of the board's log
   (the question and its answer, the clue). Errors announce themselves (role="alert"). */
(function () {
  var shown = null;

  function seqOf(board) {
    return board ? board.getAttribute('data-seq') : null;
  }

  function newest(board) {
    var result = board.querySelector('#result');
    if (result) {
      var heading = result.querySelector('h2, h3, p');
      return (heading || result).textContent;
    }
    var lines = board.querySelectorAll('.log li:not(.muted)');
    return lines.length ? lines[lines.length - 1].textContent : '';
  }

  document.addEventListener('DOMContentLoaded', function () {
    shown = seqOf(document.getElementById('board'));
  });
  document.addEventListener('htmx:wsAfterMessage', function () {
    var board = document.getElementById('board');
    var announcer = document.getElementById('announcer');
    var seq = seqOf(board);
    if (!board || !announcer || seq === shown) {
      return;
    }
    shown = seq;
    announcer.textContent = newest(board).replace(/\s+/g, ' ').trim();
  });
})();

/* A study's group lobby closes once its group has formed: the board it pushes last carries a
   Continue link marked data-follow, which leads to the group's table; the page follows it. */
(function () {
  function follow() {
    var link = document.querySelector('#board a[data-follow]');
    if (link) {
      window.location.assign(link.href);
    }
  }
  document.addEventListener('htmx:wsAfterMessage', follow);
  document.addEventListener('DOMContentLoaded', follow);
})();
