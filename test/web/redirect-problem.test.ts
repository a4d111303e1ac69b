import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

const { redirectProblem } = (await import(
  pathToFileURL(`${import.meta.dirname}/../../src/web/dashboard/public/domain-words.js`).href
)) as {
  redirectProblem: (redirects: [string, string][], name?: (host: string) => string) => string | null;
};

/**
 * The Domains page's refusal of a redirect chain or loop (domain-words.js, used by
 * domain-settings-form.js before anything is sent): it names the hosts involved, and a loop is
 * told as a loop (it used to tell you to point www.shop-example.com "straight at
 * www.shop-example.com").
 */
describe('the redirect chain and loop message', () => {
  it('tells a two-host loop as a loop, naming both hosts', () => {
    assert.equal(
      redirectProblem([
        ['www.shop-example.com', 'shop-example.com'],
        ['shop-example.com', 'www.shop-example.com'],
      ]),
      'www.shop-example.com and shop-example.com would redirect to each other, a loop: let one of them serve the project (“Serves the project”), and the other redirect to it.',
    );
  });

  it('names every host of a longer loop, even when the first redirect only leads into it', () => {
    assert.equal(
      redirectProblem([
        ['a.example.com', 'b.example.com'],
        ['b.example.com', 'c.example.com'],
        ['c.example.com', 'd.example.com'],
        ['d.example.com', 'b.example.com'],
      ]),
      'b.example.com → c.example.com → d.example.com → b.example.com is a redirect loop: let one of them serve the project (“Serves the project”), and the others redirect to it.',
    );
    assert.equal(
      redirectProblem([['a.example.com', 'a.example.com']]),
      'a.example.com would redirect to itself: let it serve the project.',
    );
  });

  it('points a chain at its real end, in the Unicode form shown', () => {
    assert.equal(
      redirectProblem([
        ['shop-example.com', 'www.shop-example.com'],
        ['www.shop-example.com', 'shop.platform.test'],
      ]),
      'shop-example.com would redirect to www.shop-example.com, which itself redirects to shop.platform.test: point shop-example.com straight at shop.platform.test.',
    );
    const unicode = new Map([['xn--bcher-kva.example', 'bücher.example']]);
    assert.equal(
      redirectProblem(
        [
          ['old.example', 'xn--bcher-kva.example'],
          ['xn--bcher-kva.example', 'mid.example'],
          ['mid.example', 'end.example'],
        ],
        (host) => unicode.get(host) ?? host,
      ),
      'old.example would redirect to bücher.example, which itself redirects to mid.example: point old.example straight at end.example.',
    );
  });

  it('has nothing to say about redirects that each land on a serving host', () => {
    assert.equal(
      redirectProblem([
        ['shop-example.com', 'www.shop-example.com'],
        ['old.shop-example.com', 'www.shop-example.com'],
      ]),
      null,
    );
    assert.equal(redirectProblem([]), null);
  });
});
