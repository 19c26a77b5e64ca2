import { Elysia } from 'elysia';
import type { OperatorConsole } from '../console/index.ts';
import { CONSOLE_PREFIX, ConsoleKey, handleConsole } from './routes/index.ts';
import { errorResponse } from './wire/index.ts';

/**
 * The operator's listener (`server.adminListen`): the operator console and nothing else, so that the address a
 * firewall keeps to operators holds only what is theirs. With a key configured (`server.adminKeyEnv`), it is asked
 * here too.
 */
export function createConsoleApp(view: OperatorConsole, key?: string) {
  const consoleKey = key === undefined ? undefined : new ConsoleKey(key);
  const page = ({ request }: { request: Request }) => handleConsole(request, view, consoleKey);
  return new Elysia({ name: 'doi-holdings-console' })
    .onError(({ code, error }) =>
      code === 'NOT_FOUND'
        ? errorResponse(404, 'NOT_FOUND', 'no such route: the console is at /console')
        : errorResponse(500, 'INTERNAL', `internal error: ${(error as Error | null)?.message ?? String(error)}`),
    )
    .all(CONSOLE_PREFIX, page)
    .all(`${CONSOLE_PREFIX}/*`, page);
}
