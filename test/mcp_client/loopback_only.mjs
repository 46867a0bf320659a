// Preloaded (node --import) into servers the tests start that listen on a port without naming
// an address (server-everything's streamableHttp): every listen goes to 127.0.0.1, so tests
// never open a port beyond loopback.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || typeof args[0] === 'string') {
    const [port, ...rest] = args;
    const callback = typeof rest[rest.length - 1] === 'function' ? rest.pop() : undefined;
    return listen.call(this, { port: Number(port), host: '127.0.0.1' }, callback);
  }
  if (args[0] && typeof args[0] === 'object' && !args[0].host && !args[0].path) args[0] = { ...args[0], host: '127.0.0.1' };
  return listen.apply(this, args);
};
