import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import type {ErrorObject, ValidateFunction} from 'ajv';

/** The protocols the fake herdr can play; each has herdr's own schema beside this file. */
export type FakeProtocol = 20 | 22;
export const FAKE_PROTOCOLS: readonly FakeProtocol[] = [20, 22];

/** herdr's own schemas, one per protocol (copied unmodified, see NOTICE beside them). */
const HERE = path.dirname(fileURLToPath(import.meta.url));
export const HERDR_SCHEMA_FILES: Readonly<Record<FakeProtocol, string>> = {
	20: path.resolve(HERE, 'herdr', 'herdr-api.schema.json'),
	22: path.resolve(HERE, 'herdr', 'herdr-api-p22.schema.json'),
};

/** The five wire shapes the schema's `schemas` map describes. */
export type HerdrShape = 'request' | 'success_response' | 'error_response' | 'event' | 'subscription_event';

export type HerdrValidator = (shape: HerdrShape, value: unknown) => string | undefined;

/** Integer formats the Rust side emits, checked for real (a negative pid is a violation). */
const INT_RANGES: Readonly<Record<string, readonly [number, number]>> = {
	uint: [0, Number.MAX_SAFE_INTEGER],
	uint16: [0, 0xffff],
	uint32: [0, 0xffffffff],
	uint64: [0, Number.MAX_SAFE_INTEGER],
	int32: [-0x80000000, 0x7fffffff],
};

function describe(errors: readonly ErrorObject[] | null | undefined): string {
	return (errors ?? [])
		.slice(0, 4)
		.map(e => `${e.instancePath || '/'} ${e.message ?? ''}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`)
		.join('; ');
}

const cached = new Map<FakeProtocol, HerdrValidator>();

/**
 * One validator per shape, compiled from the protocol's schema file: the root is added once (its
 * `$ref`s point into `#/schemas/...`) and each shape is fetched by JSON pointer. Returns a readable
 * violation, or undefined when the value conforms.
 */
export function herdrValidator(protocol: FakeProtocol = 22): HerdrValidator {
	const known = cached.get(protocol);
	if (known) return known;
	const root = JSON.parse(fs.readFileSync(HERDR_SCHEMA_FILES[protocol], 'utf8')) as Record<string, unknown>;
	if (root['protocol'] !== protocol) throw new Error(`${HERDR_SCHEMA_FILES[protocol]} is the schema of protocol ${String(root['protocol'])}, not ${protocol}`);
	// strict: an unknown keyword or format in the schema is an error, not silently ignored.
	const ajv = new Ajv2020.default({strict: true, allErrors: true});
	ajv.addVocabulary(['protocol', 'schema_version', 'schemas']);
	for (const [name, [min, max]] of Object.entries(INT_RANGES)) {
		ajv.addFormat(name, {type: 'number', validate: (n: number) => Number.isInteger(n) && n >= min && n <= max});
	}
	ajv.addFormat('float', {type: 'number', validate: (n: number) => Number.isFinite(n)});
	ajv.addSchema(root, 'herdr');
	const validators = new Map<HerdrShape, ValidateFunction>();
	const get = (shape: HerdrShape): ValidateFunction => {
		let fn = validators.get(shape);
		if (!fn) {
			fn = ajv.getSchema(`herdr#/schemas/${shape}`);
			if (!fn) throw new Error(`schema has no ${shape}`);
			validators.set(shape, fn);
		}
		return fn;
	};
	const validator: HerdrValidator = (shape, value) => {
		const fn = get(shape);
		return fn(value) ? undefined : `${shape}: ${describe(fn.errors)}`;
	};
	cached.set(protocol, validator);
	return validator;
}
