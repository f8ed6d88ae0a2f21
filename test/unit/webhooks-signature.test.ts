import { expect } from 'chai';
import fc from 'fast-check';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import {
  newWebhookSecret,
  signatureHeader,
  WEBHOOK_USER_AGENT,
  webhookHeaders,
} from '../../src/webhooks/signature.js';

const nowS = (): number => Math.floor(Date.now() / 1000);

describe('webhook signatures', () => {
  it('makes secrets of 32 random bytes behind whsec_', () => {
    const secrets = new Set(Array.from({ length: 50 }, () => newWebhookSecret()));
    expect(secrets.size).to.equal(50);
    for (const secret of secrets) {
      expect(secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).to.have.length(32);
    }
  });

  it('matches the Standard Webhooks reference signature', () => {
    expect(
      signatureHeader(
        ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).to.equal('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('sends the Standard Webhooks headers', () => {
    const secret = newWebhookSecret();
    const body = '{"type":"principal.created"}';
    const headers = webhookHeaders({ id: 'evt_1', timestampS: 1700000000, body, secrets: [secret] });
    expect(headers).to.deep.equal({
      'content-type': 'application/json',
      'user-agent': WEBHOOK_USER_AGENT,
      'webhook-id': 'evt_1',
      'webhook-timestamp': '1700000000',
      'webhook-signature': signatureHeader([secret], 'evt_1', 1700000000, body),
    });
    expect(WEBHOOK_USER_AGENT).to.equal('PrincipalsAccessService-Webhooks/1');
  });

  it('verifies with the standardwebhooks library, for any id and JSON body', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 60, unit: 'grapheme' }),
        fc.json({ stringUnit: 'grapheme', maxDepth: 3 }),
        fc.integer({ min: -120, max: 120 }),
        (id, body, skew) => {
          const secret = newWebhookSecret();
          const headers = webhookHeaders({ id, timestampS: nowS() + skew, body, secrets: [secret] });
          expect(new Webhook(secret).verify(body, headers)).to.deep.equal(JSON.parse(body));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('during a rotation, verifies with either secret and no other', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.json({ maxDepth: 2 }), (id, body) => {
        const [previous, next, stranger] = [newWebhookSecret(), newWebhookSecret(), newWebhookSecret()];
        const headers = webhookHeaders({ id, timestampS: nowS(), body, secrets: [next, previous] });
        const parts = headers['webhook-signature']!.split(' ');
        expect(parts).to.have.length(2);
        for (const part of parts) expect(part).to.match(/^v1,[A-Za-z0-9+/]{43}=$/);
        expect(new Webhook(previous).verify(body, headers)).to.deep.equal(JSON.parse(body));
        expect(new Webhook(next).verify(body, headers)).to.deep.equal(JSON.parse(body));
        expect(() => new Webhook(stranger).verify(body, headers)).to.throw(WebhookVerificationError);
      }),
      { numRuns: 50 },
    );
  });

  it('fails verification when the body, id or timestamp differ from what was signed', () => {
    const secret = newWebhookSecret();
    const body = '{"a":1}';
    const timestampS = nowS();
    const headers = webhookHeaders({ id: 'evt_1', timestampS, body, secrets: [secret] });
    const webhook = new Webhook(secret);
    expect(() => webhook.verify('{"a":2}', headers)).to.throw(WebhookVerificationError);
    expect(() => webhook.verify(body, { ...headers, 'webhook-id': 'evt_2' })).to.throw(
      WebhookVerificationError,
    );
    expect(() => webhook.verify(body, { ...headers, 'webhook-timestamp': String(timestampS - 1) })).to.throw(
      WebhookVerificationError,
    );
  });

  it('refuses to sign without a secret or with a fractional timestamp', () => {
    expect(() => signatureHeader([], 'evt_1', 1700000000, '{}')).to.throw(/secret/);
    expect(() => signatureHeader([newWebhookSecret()], 'evt_1', 1700000000.5, '{}')).to.throw(RangeError);
  });
});
