'use strict';

// The public socket and agent symbols, under the names agentkeepalive 4.x
// exports, so code that reads `socket[constants.SOCKET_NAME]` keeps working.
module.exports = Object.freeze({
  // agent[CURRENT_ID]: the last socket id handed out (wraps before MAX_SAFE_INTEGER)
  CURRENT_ID: Symbol('agentkeepalive#currentId'),
  // agent[CREATE_ID](): the next socket id
  CREATE_ID: Symbol('agentkeepalive#createId'),
  // agent[INIT_SOCKET](socket, options): tags and listens to a new socket
  INIT_SOCKET: Symbol('agentkeepalive#initSocket'),
  // httpsAgent[CREATE_HTTPS_CONNECTION](options, cb): core's https createConnection
  CREATE_HTTPS_CONNECTION: Symbol('agentkeepalive#createHttpsConnection'),
  // socket[SOCKET_CREATED_TIME]: Date.now() when the socket was created
  SOCKET_CREATED_TIME: Symbol('agentkeepalive#socketCreatedTime'),
  // socket[SOCKET_NAME]: 'sock[<id>#<origin>]', free of TLS key or certificate text
  SOCKET_NAME: Symbol('agentkeepalive#socketName'),
  // socket[SOCKET_REQUEST_COUNT]: requests assigned to the socket
  SOCKET_REQUEST_COUNT: Symbol('agentkeepalive#socketRequestCount'),
  // socket[SOCKET_REQUEST_FINISHED_COUNT]: requests the socket finished
  SOCKET_REQUEST_FINISHED_COUNT: Symbol('agentkeepalive#socketRequestFinishedCount'),
});
