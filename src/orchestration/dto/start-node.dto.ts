import { ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsOptional,
  IsString,
  Length,
  ValidateBy,
  ValidateIf,
  type ValidationOptions,
} from 'class-validator';
import { OptionalText, RequiredText } from '../../common/validation.js';
import { isRecord } from '../../common/is-record.js';

// Nova's limits on server metadata, applied to every cloud so that a request valid on one is valid on all.
const MAX_METADATA_ITEMS = 128;
const MAX_METADATA_TEXT = 255;

/** A JSON object of at most 128 string values, keys and values 1..255 / 0..255 characters (Nova's rule). */
function IsMetadata(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isMetadata',
      validator: {
        validate: (value: unknown): boolean =>
          isRecord(value) &&
          Object.keys(value).length <= MAX_METADATA_ITEMS &&
          Object.entries(value).every(
            ([key, item]) =>
              key.length >= 1 &&
              key.length <= MAX_METADATA_TEXT &&
              typeof item === 'string' &&
              item.length <= MAX_METADATA_TEXT,
          ),
        defaultMessage: () =>
          `metadata must be an object of at most ${MAX_METADATA_ITEMS} string values (keys and values up to ${MAX_METADATA_TEXT} characters)`,
      },
    },
    options,
  );
}

/** cloud-init user data: at most 16 KiB of UTF-8 (API.md 13). */
export const MAX_USER_DATA_BYTES = 16 * 1024;
/** Tags of a node, `owner` (which the service sets) included: at most 20 (API.md 13). */
export const MAX_TAGS = 20;
// EC2's limits on a tag, which Nova's (255 and 255) also admit.
const MAX_TAG_KEY = 128;
const MAX_TAG_VALUE = 255;
const MAX_SECURITY_GROUPS = 16;
// Half of a UTF-16 pair alone: a JSON string can carry one (\\ud800), UTF-8 cannot.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Text: a string that is well-formed Unicode, without NUL, of at most 16 KiB in UTF-8. */
function IsUserData(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isUserData',
      validator: {
        validate: (value: unknown): boolean =>
          typeof value === 'string' &&
          !LONE_SURROGATE.test(value) &&
          !value.includes('\u0000') &&
          Buffer.byteLength(value, 'utf8') <= MAX_USER_DATA_BYTES,
        defaultMessage: () => `user_data must be text of at most ${MAX_USER_DATA_BYTES} bytes in UTF-8`,
      },
    },
    options,
  );
}

/** An object of at most 20 string values counting `owner`, keys 1..128 and values 0..255 characters. */
function IsTags(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isTags',
      validator: {
        validate: (value: unknown): boolean =>
          isRecord(value) &&
          // `owner` is the service's: one of the 20 whether or not the body names it.
          Object.keys(value).filter((key) => key !== 'owner').length <= MAX_TAGS - 1 &&
          Object.entries(value).every(
            ([key, item]) =>
              key.length >= 1 &&
              key.length <= MAX_TAG_KEY &&
              typeof item === 'string' &&
              item.length <= MAX_TAG_VALUE,
          ),
        defaultMessage: () =>
          `tags must be an object of at most ${MAX_TAGS} string values, owner included (keys up to ${MAX_TAG_KEY}, values up to ${MAX_TAG_VALUE} characters)`,
      },
    },
    options,
  );
}

/** Body of `vm/start`; unknown members (`auth_token`, …) are ignored. */
export class StartNodeDto {
  @RequiredText(1, 255, 'cloud', 'Name of the new node')
  name!: string;

  @RequiredText(1, 255, '1', 'Id of an image of the cloud (see the images operation)')
  image!: string;

  @RequiredText(1, 255, '1', 'Id of a size (flavor) of the cloud (see the sizes operation)')
  size!: string;

  @OptionalText(
    1,
    255,
    'laptop',
    'One of your key pairs in this cloud (see keypairs-get); an admin may also name any key pair of the cloud by its whole name there',
  )
  keyname?: string;

  @IsOptional()
  @IsMetadata()
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { purpose: 'test' },
    description: 'Free-form metadata: an object of string values (at most 128, up to 255 characters each)',
  })
  metadata?: Record<string, string>;

  @IsOptional()
  @IsUserData()
  @ApiPropertyOptional({
    type: String,
    maxLength: MAX_USER_DATA_BYTES,
    example: '#cloud-config\npackages: [htop]\n',
    description:
      'cloud-init user data: text of at most 16 KiB in UTF-8 (sent base64-encoded to OpenStack and EC2)',
  })
  user_data?: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_SECURITY_GROUPS)
  @IsString({ each: true })
  @Length(1, 255, { each: true, message: 'security_groups must each be 1 to 255 characters' })
  @ApiPropertyOptional({
    type: String,
    isArray: true,
    example: ['default'],
    description:
      'Security groups by name (EC2 also takes sg- ids); an unknown one is a 400 with the cloud’s message',
  })
  security_groups?: string[];

  @IsOptional()
  @IsTags()
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { project: 'genomics' },
    description:
      'Tags (at most 20, owner included; the service sets owner to your username): OpenStack server metadata, EC2 instance tags; shown again in the node’s extra.tags',
  })
  tags?: Record<string, string>;

  // Not IsOptional, which would let null through: only an absent member means false.
  @ValidateIf((body: StartNodeDto) => body.async !== undefined)
  @IsBoolean({ message: 'async must be true or false' })
  @ApiPropertyOptional({
    type: Boolean,
    default: false,
    example: false,
    description:
      "true: answer 202 with a job at once and start the node in the background (follow it at the job's href)",
  })
  async?: boolean;
}
