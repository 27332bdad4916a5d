import { RequestError } from '@octokit/request-error';

/** The RequestError a call fails with (the test fails if it succeeds). */
export async function failure(p: Promise<unknown>): Promise<RequestError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof RequestError) return e;
    throw e;
  }
  throw new Error('expected the request to fail');
}

export const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
export const unb64 = (text: string): string => Buffer.from(text, 'base64').toString('utf8');
